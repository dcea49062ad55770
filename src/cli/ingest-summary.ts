import { RECORD_KINDS, type RecordKind } from '../domain/records.js';

/** What an import or a push counts: each record kind, and the lines that could not be records at all. */
type SummaryKind = RecordKind | 'invalid';

interface Rejection {
  where: string;
  kind: SummaryKind;
  reason: string;
}

/** Rejections kept with their reasons (the counts are always complete). */
const KEPT_REJECTIONS = 1000;
/** Rejections listed in the printed summary. */
const LISTED_REJECTIONS = 50;

const LABELS: Record<SummaryKind, string> = {
  context: 'contexts',
  session: 'sessions',
  metric: 'metrics',
  invalid: 'unreadable lines',
};

/** What a summary says: its column names, its heading when finished and when stopped, what "again" means. */
interface Wording<Stored extends string, Again extends string> {
  columns: readonly [Stored, Again];
  finished: string;
  stopped: string;
  note: string;
}

/**
 * The tally of an import or a push (monitor-admin): per kind, how many records were stored (`stored`: "imported"
 * or "created"), were there already (`again`: "skipped" or "replayed") or were rejected; and the first rejections,
 * in file order, with their reasons.
 */
export class IngestSummary<Stored extends string, Again extends string> {
  readonly counts: Record<SummaryKind, Record<Stored | Again | 'rejected', number>>;
  readonly rejections: Rejection[] = [];

  constructor(private readonly wording: Wording<Stored, Again>) {
    const { columns } = wording;
    const zero = () =>
      ({ [columns[0]]: 0, [columns[1]]: 0, rejected: 0 }) as Record<Stored | Again | 'rejected', number>;
    this.counts = { ...Object.fromEntries(RECORD_KINDS.map((kind) => [kind, zero()])), invalid: zero() } as Record<
      SummaryKind,
      Record<Stored | Again | 'rejected', number>
    >;
  }

  count(kind: RecordKind, outcome: Stored | Again): void {
    this.counts[kind][outcome] += 1;
  }

  reject(where: string, kind: SummaryKind, reason: string): void {
    this.counts[kind].rejected += 1;
    if (this.rejections.length < KEPT_REJECTIONS) this.rejections.push({ where, kind, reason });
  }

  get rejected(): number {
    return Object.values(this.counts).reduce((sum, c) => sum + c.rejected, 0);
  }

  /** The table of counts under its heading (whether the run `stopped` before the end), then the first rejections. */
  format(stopped: boolean): string {
    const cell = (text: string | number): string => String(text).padStart(10);
    const { columns, note } = this.wording;
    const [stored, again] = columns;
    const heading = stopped ? this.wording.stopped : this.wording.finished;
    const rows = [`${''.padEnd(18)}${cell(stored)}${cell(again)}${cell('rejected')}`];
    for (const [kind, label] of Object.entries(LABELS) as Array<[SummaryKind, string]>) {
      const c = this.counts[kind];
      if (kind === 'invalid' && c.rejected === 0) continue;
      rows.push(`${label.padEnd(18)}${cell(c[stored])}${cell(c[again])}${cell(c.rejected)}`);
    }
    const rejected = this.rejected;
    const listed = this.rejections.slice(0, LISTED_REJECTIONS);
    const lines = [heading, ...rows.map((row) => `  ${row}`), `  ${note}`];
    if (rejected > 0) {
      lines.push(`rejected${rejected > listed.length ? ` (the first ${listed.length} of ${rejected})` : ''}:`);
      lines.push(...listed.map((r) => `  ${r.where}${r.kind === 'invalid' ? '' : ` (${r.kind})`}: ${r.reason}`));
    }
    return `${lines.join('\n')}\n`;
  }
}
