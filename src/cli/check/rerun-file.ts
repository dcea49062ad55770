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
 */

/** What the file needs of a test: its file and its variant, as pytest-monitor stored them. */
export interface RerunTarget {
  item_variant: string;
  /** The test's file relative to pytest's rootdir; absent or "" when not known. */
  item_fs_loc?: string | undefined;
}

/**
 * A character of a word of a `-k` expression (pytest's mark/expression.py: `(\w|:|\+|-|\.|\[|\]|\\|/)+`). Python's
 * `\w` is Unicode's letters and numbers; only letters and decimal digits are taken as such here, so that a word is
 * never one pytest would refuse (a character left out only splits a word in two, which selects more, never less).
 */
const WORD = /[\p{L}\p{Nd}_:+\-.[\]\\/]+/gu;

/** Words pytest's expression language reserves: never a word of a test's name. */
const RESERVED = new Set(['and', 'or', 'not']);

/** The words of `name` a `-k` expression can hold, each a substring of the name. */
function wordsOf(name: string): string[] {
  return (name.match(WORD) ?? []).filter((word) => !RESERVED.has(word));
}

/** The last part of a path (either separator). */
const baseName = (path: string): string => path.split(/[/\\]/).pop() ?? path;

/**
 * A path as one line of the file: never read as an option (`-x`) or as another arguments file (`@x`); null when a line
 * cannot hold it (a line break inside).
 */
function pathLine(path: string): string | null {
  if (/[\r\n]/.test(path)) return null;
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
  const lines = ['-k', [...terms].sort().join(' or '), ...(everyFile ? [] : [...files].sort())];
  return `${lines.join('\n')}\n`;
}
