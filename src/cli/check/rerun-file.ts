/**
 * The re-run file of `check --rerun-file`: a pytest arguments file (`pytest @monitor-rerun.txt`, pytest ≥ 8.2: one
 * argument a line) that selects the tests a `confirm` verdict asks to run again, from what pytest-monitor stored of
 * each: its file (item_fs_loc, relative to pytest's rootdir) and its variant (item_variant: the node's name with every
 * `-` replaced by `, `). pytest-monitor stores no class name.
 *
 * No pytest argument selects exactly such a set (tried on pytest 9.1, test/cli/rerun-file.test.ts):
 * - a node id (`file::name[id]`) names every level: a method of a class is `file::Class::name`, and pytest refuses a
 *   node id that matches nothing ("not found", exit 4, no test run), so node ids without the class miss or fail;
 * - `--deselect` removes node-id prefixes: it needs the very tests not to run;
 * - `-k` matches each word of its expression as a case-insensitive substring of any name of a test's chain (its
 *   name with its parameters, its class, its module's file name, its directories, its markers).
 * So the file gives pytest the flagged tests' files, and a `-k` expression that, per test, asks for its file's name and
 * every word of its variant: `(test_math.py and test_p[1 and 2])`. It never leaves a flagged test out. It may also run
 * (a) the tests of the same files whose names hold a flagged name (`test_m` also runs `test_m2`, `test_m[1]`, and
 * every test of `test_math.py`, whose module name holds it — the whole file for a test named after its file),
 * (b) methods of the same name in other classes of the file (pytest-monitor stores them as one test, too),
 * (c) for a variant with `, ` (an id of several parameters, `1-2`, or a parameter holding `, `), the tests of the
 * file whose names hold each part (`test_p[10-2]` for `test_p[1, 2]`), and (d) the same tests of another flagged file
 * of the same name in another directory. A test whose file is unknown (an older service, a metric imported without
 * one) is looked for in the whole suite pytest collects by default.
 *
 * Run it from pytest's rootdir (where the tests ran from), as `pytest @file` with the same options as the first run.
 *
 * Every line is one argument and only the first is an option (-k): what a stored name or path holds never adds one.
 * argparse reads the file (UTF-8, as written) one argument a line, splitting it at every line break of Python's
 * `str.splitlines()` (line-breaks.ts), and reads a line starting with `-` as an option and one starting with `@` as
 * another arguments file. So:
 * - the `-k` expression holds only ASCII words of names (WORD: no line break, no `@`), and is put in parentheses when
 *   it would start with `-` (`(-x)`: a word that is a name's `-x`);
 * - a path starting with `-` or `@` is written `./-x`, and a path holding a line break is left out (its test is then
 *   looked for in the whole suite, as for a file not known). The API refuses such paths and names since they could
 *   add arguments here; a store may hold older ones.
 * A Python reading the file in an ISO 8859 locale's encoding instead of UTF-8 takes the byte 0x85 of a UTF-8
 * character for a line break (NEL): no path line holds such a character right before a `-` or `@`
 * (NEL_BYTE_THEN_SIGN), so nothing is read as an option there either. Under other encodings than UTF-8, run pytest in
 * Python's UTF-8 mode (`PYTHONUTF8=1`). test/cli/rerun-file-property.test.ts checks all of this on generated names and
 * paths with the real pytest's argument parser.
 */

import { LINE_BREAK } from '../../domain/line-breaks.js';

/** What the file needs of a test: its file and its variant, as pytest-monitor stored them. */
export interface RerunTarget {
  item_variant: string;
  /** The test's file relative to pytest's rootdir; absent or "" when not known. */
  item_fs_loc?: string | undefined;
}

/**
 * A character of a word of a `-k` expression (pytest's mark/expression.py: `(\w|:|\+|-|\.|\[|\]|\\|/)+`): ASCII
 * only. Python's `\w` is every letter and number of the Unicode version of the Python that runs pytest (Unicode 13 in
 * Python 3.10), older than JavaScript's: a letter newer than that would make pytest refuse the whole expression, and a
 * Python reading the file in another encoding than UTF-8 would read other letters than were written. A character left
 * out only splits a word in two, which selects more, never less: a name beyond ASCII (a function `test_é`; pytest
 * writes a parameter's id in ASCII, `test_w[\xfc]`) selects by its ASCII words.
 */
const WORD = /[A-Za-z0-9_:+\-.[\]\\/]+/g;

/** Words pytest's expression language reserves: never a word of a test's name. */
const RESERVED = new Set(['and', 'or', 'not']);

/**
 * A character whose UTF-8 form ends in the byte 0x85, directly followed by `-` or `@` (the `u` flag: a character
 * beyond U+FFFF is one). A Python that reads the file in an ISO 8859 locale's encoding rather than UTF-8 (argparse
 * opens it in the locale's encoding before Python 3.12, in the file system's since) reads that byte as NEL, a line
 * break, and the `-` or `@` after it as the start of an argument.
 */
const NEL_BYTE_THEN_SIGN = /[^\0-\x7f](?=[-@])/gu;

/**
 * Whether a line holding `text`, read in an ISO 8859 encoding, would break before a `-` or `@`: the last byte of a
 * character's UTF-8 form, a continuation byte 10xxxxxx, holds its six lowest bits.
 */
const breaksBeforeSign = (text: string): boolean =>
  [...text.matchAll(NEL_BYTE_THEN_SIGN)].some(([char]) => ((char.codePointAt(0) ?? 0) & 0x3f) === 0x05);

/** The words of `name` a `-k` expression can hold, each a substring of the name. */
function wordsOf(name: string): string[] {
  return (name.match(WORD) ?? []).filter((word) => !RESERVED.has(word));
}

/** The last part of a path (either separator). */
const baseName = (path: string): string => path.split(/[/\\]/).pop() ?? path;

/**
 * A path as one line of the file: never read as an option (`-x`) or as another arguments file (`@x`); null when a line
 * cannot hold it: a line break inside (LINE_BREAK: Python's, which argparse splits the file at), or a `-` or `@` that
 * an ISO 8859 reading would put at the start of a line (NEL_BYTE_THEN_SIGN).
 */
function pathLine(path: string): string | null {
  if (LINE_BREAK.test(path) || breaksBeforeSign(path)) return null;
  return /^[-@]/.test(path) ? `./${path}` : path;
}

/** The `-k` term of one test: its file's name and every word of its variant, all of them (null: nothing to ask). */
function termOf(file: string, variant: string): string | null {
  const words = [...(file === '' ? [] : wordsOf(baseName(file))), ...wordsOf(variant)];
  if (words.length === 0) return null;
  return words.length === 1 ? (words[0] as string) : `(${words.join(' and ')})`;
}

/**
 * The text of the arguments file that re-runs `targets` (each test once, however many of its resources were
 * flagged): `-k` and its expression, then the files, each a line. Empty when there is nothing to select by (no
 * target, or a target with neither a file nor a name): pytest then runs what it runs by default.
 */
export function rerunFile(targets: readonly RerunTarget[]): string {
  const terms = new Set<string>();
  const files = new Set<string>();
  let everyFile = false;
  let everything = targets.length === 0;
  for (const { item_variant: variant, item_fs_loc: file = '' } of targets) {
    const term = termOf(file, variant);
    if (term === null) everything = true;
    else terms.add(term);
    const line = file === '' ? null : pathLine(file);
    if (line === null) everyFile = true;
    else files.add(line);
  }
  if (everything) return '';
  const expression = [...terms].sort().join(' or ');
  // An expression starting with `-` (a word of a name, `-x`) would be read as an option, not as -k's value.
  const keyword = expression.startsWith('-') ? `(${expression})` : expression;
  const lines = ['-k', keyword, ...(everyFile ? [] : [...files].sort())];
  return `${lines.join('\n')}\n`;
}
