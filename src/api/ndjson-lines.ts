/** One non-blank line of an NDJSON body: its number in the body (1 = first line) and its text. */
export interface BodyLine {
  line: number;
  text: string;
}

const NEWLINE = 0x0a;
const isBlankByte = (byte: number): boolean => byte === 0x20 || byte === 0x09 || byte === 0x0d;

/**
 * Cuts a body into lines as its chunks arrive, holding only the line in progress: a body of millions of blank lines
 * costs one pass over its bytes and no memory, a line of content is decoded once, when its newline arrives. Blank
 * lines (spaces, tabs and CRs only) are counted, never returned. A line may span chunks, and a character its chunks'
 * boundary cuts in two is decoded whole (the line's bytes are joined before decoding).
 */
export class LineSplitter {
  private line = 1;
  /** The bytes of the current line from its first non-blank byte, when it has one. */
  private pending: Buffer[] = [];
  private blank = true;

  /** The lines this chunk completes. */
  push(chunk: Buffer): BodyLine[] {
    const lines: BodyLine[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.blank) {
        // Skip blank bytes and empty lines in a tight loop: the cost of a body of newlines.
        let byte = chunk[at] as number;
        while (byte === NEWLINE || isBlankByte(byte)) {
          if (byte === NEWLINE) this.line += 1;
          at += 1;
          if (at === chunk.length) return lines;
          byte = chunk[at] as number;
        }
        this.blank = false;
      }
      const newline = chunk.indexOf(NEWLINE, at);
      if (newline < 0) {
        this.pending.push(chunk.subarray(at));
        return lines;
      }
      if (this.pending.length === 0) {
        // The whole line is in this chunk (the common case): decoded in place.
        lines.push(this.completed(chunk.toString('utf8', at, newline)));
      } else {
        this.pending.push(chunk.subarray(at, newline));
        lines.push(this.completed(Buffer.concat(this.pending).toString('utf8')));
      }
      at = newline + 1;
    }
    return lines;
  }

  /** The last line, when the body does not end with a newline. */
  end(): BodyLine[] {
    return this.blank ? [] : [this.completed(Buffer.concat(this.pending).toString('utf8'))];
  }

  private completed(text: string): BodyLine {
    const done = { line: this.line, text };
    this.pending = [];
    this.blank = true;
    this.line += 1;
    return done;
  }
}
