import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import fc from 'fast-check';
import { rerunFile, type RerunTarget } from '../../src/cli/check/rerun-file.js';
import { childEnv, clientPython } from '../e2e/client.js';

/**
 * Whatever a store holds as a test's name and path, the re-run file of `check --rerun-file` is read by the real pytest
 * (the client venv's, scripts/client-venv.sh) as exactly the arguments intended: `-k` and its expression, then the
 * flagged files, each as stored (or `./` before it) — never another option, never another arguments file. Names and
 * paths are generated from arbitrary Unicode with every character Python's `str.splitlines()` breaks at, leading `-`,
 * `@`, spaces, brackets and pytest's reserved words. Each file is parsed by pytest's own argument parser
 * (pytest-arguments.py, one process for all of them), read as UTF-8 and also as a Python in an ISO 8859 locale reads
 * it, where nothing may be an option either.
 */

const HARNESS = join(dirname(fileURLToPath(import.meta.url)), 'pytest-arguments.py');

/** What pytest-arguments.py answers for one file. */
type Parsed =
  | { error: string }
  | {
      arguments: string[];
      keyword: string | null;
      file_or_dir: string[];
      options: Record<string, string>;
      compiles: boolean;
    };

/** Every character Python's str.splitlines() ends a line at, written here apart from the code under test. */
const PYTHON_LINE_BREAKS = ['\n', '\r', '\r\n', '\v', '\f', '\x1c', '\x1d', '\x1e', '\x85', '\u2028', '\u2029'];

/**
 * Pieces of names and paths: the line breaks; what starts an option or an arguments file; what a `-k` expression or a
 * path treats apart; characters whose UTF-8 form ends in the byte 0x85 (NEL in ISO 8859: ą, Ņ, ₅, 𐄅); and words.
 */
const PIECES = [
  '-',
  '--',
  '-k',
  '--basetemp=victim',
  '@',
  '@extra.txt',
  '-p evil',
  ' ',
  '\t',
  '\0',
  '[',
  ']',
  '(',
  ')',
  ',',
  ', ',
  '/',
  '\\',
  ':',
  '::',
  '=',
  '.',
  '"',
  "'",
  'and',
  'or',
  'not',
  'ą',
  'Ņ',
  '₅',
  '\u{10105}',
  'é',
  '😀',
  'test_',
  '.py',
  'tests/',
];
const text = fc
  .array(
    fc.oneof(
      { weight: 12, arbitrary: fc.constantFrom(...PIECES) },
      { weight: 1, arbitrary: fc.constantFrom(...PYTHON_LINE_BREAKS) },
      { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 3 }) },
    ),
    { maxLength: 8 },
  )
  .map((pieces) => pieces.join(''));
const target: fc.Arbitrary<RerunTarget> = fc.record({
  item_fs_loc: fc.oneof({ weight: 8, arbitrary: text }, { weight: 1, arbitrary: fc.constantFrom('', undefined) }),
  item_variant: text,
});

/** The cases, and a name that is one word starting with `-`. */
const NAMED: Array<{ title: string; targets: RerunTarget[] }> = [
  {
    title: 'a path holding U+2028 then --basetemp=victim',
    targets: [{ item_fs_loc: 'tests/test_a.py\u2028--basetemp=victim', item_variant: 'test_a' }],
  },
  {
    title: 'a path holding NEL then @extra.txt',
    targets: [{ item_fs_loc: 'tests/a\x85@extra.txt', item_variant: 'x' }],
  },
  { title: 'a lone -k word starting with -', targets: [{ item_variant: '-x' }] },
  { title: 'a lone -k word --basetemp', targets: [{ item_fs_loc: '', item_variant: '--basetemp' }] },
  {
    title: 'ą (UTF-8 C4 85) before -- in a path and in a name',
    targets: [{ item_fs_loc: 'tests/ą--basetemp', item_variant: 'test_ą--basetemp' }],
  },
];

const SEED = 20261128;
const GENERATED = fc.sample(fc.array(target, { minLength: 1, maxLength: 3 }), { seed: SEED, numRuns: 400 });

/** The stored path a path argument designates: as written, or with the `./` the file puts before `-` and `@`. */
const designated = (argument: string): string => (/^\.\/[-@]/.test(argument) ? argument.slice(2) : argument);

/**
 * Why a stored path may be left out of the file (its test then looked for in the whole suite): no path, a line break
 * inside, or the byte 0x85 right before `-` or `@` in its UTF-8 form.
 */
function mayBeLeftOut(path: string | undefined): boolean {
  if (path === undefined || path === '') return true;
  if (PYTHON_LINE_BREAKS.some((lineBreak) => path.includes(lineBreak))) return true;
  // Read in ISO 8859, the byte 0x85 is NEL: a line starting with the byte after it.
  const bytes = Buffer.from(path, 'utf8');
  return bytes.includes(Buffer.from([0x85, 0x2d])) || bytes.includes(Buffer.from([0x85, 0x40]));
}

describe('check --rerun-file: any stored name and path, read by the real pytest, is exactly the intended arguments', function () {
  this.timeout(120_000);
  const cases = [
    ...NAMED,
    ...GENERATED.map((targets, i) => ({ title: `generated #${i} (seed ${SEED})`, targets })),
  ].map((entry) => ({ ...entry, text: rerunFile(entry.targets) }));
  let dir = '';
  let utf8: Parsed[] = [];
  let iso8859: Parsed[] = [];

  before(async function () {
    this.timeout(6 * 60_000);
    const python = await clientPython();
    dir = mkdtempSync(join(tmpdir(), 'monitor-rerun-property-'));
    const files = cases.map(({ text }, i) => {
      const file = join(dir, `rerun-${i}.txt`);
      writeFileSync(file, text, 'utf8');
      return file;
    });
    const plan = [...files.map((file) => ({ file, latin1: false })), ...files.map((file) => ({ file, latin1: true }))];
    const answer = await new Promise<string>((resolve, reject) => {
      const child = execFile(
        python,
        [HARNESS],
        // UTF-8 mode: the file read as written, whatever the machine's locale.
        { cwd: dir, env: childEnv({ PYTHONUTF8: '1' }), maxBuffer: 64 << 20 },
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
      );
      child.stdin?.end(JSON.stringify(plan));
    });
    const parsed = JSON.parse(answer) as Parsed[];
    utf8 = parsed.slice(0, files.length);
    iso8859 = parsed.slice(files.length);
  });
  after(function () {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it('read as UTF-8: -k and its expression, then one argument a stored path, and nothing else', function () {
    const seen = { withFiles: 0, pathsLeftOut: 0 };
    cases.forEach(({ title, targets, text }, i) => {
      const parsed = utf8[i];
      const label = `${title}: ${JSON.stringify(targets)} → ${JSON.stringify(text)}: ${JSON.stringify(parsed)}`;
      if (parsed === undefined || 'error' in parsed) throw new Error(`pytest refused ${label}`);
      expect(parsed.options, label).to.deep.equal({});
      if (text === '') {
        expect(parsed.arguments, label).to.deep.equal([]);
        return;
      }
      const lines = text.split('\n');
      // -k, its expression (which pytest's -k language takes), then the paths: each line one argument.
      expect(parsed.arguments, label).to.deep.equal(lines.slice(0, -1));
      expect(parsed.arguments[0], label).to.equal('-k');
      expect(parsed.keyword, label).to.equal(parsed.arguments[1]);
      expect(parsed.compiles, label).to.equal(true);
      expect(parsed.file_or_dir, label).to.deep.equal(parsed.arguments.slice(2));
      const stored = new Set(targets.map((t) => t.item_fs_loc ?? ''));
      if (parsed.file_or_dir.length === 0) {
        expect([...stored].some(mayBeLeftOut), `${label}: no path left out without a reason`).to.equal(true);
        seen.pathsLeftOut += 1;
      } else {
        seen.withFiles += 1;
        expect(new Set(parsed.file_or_dir.map(designated)), label).to.deep.equal(stored);
      }
    });
    // The generated cases take both ways, many times (400 cases: 101 and 170 with the seed above).
    expect(seen.withFiles).to.be.at.least(50);
    expect(seen.pathsLeftOut).to.be.at.least(50);
  });

  it("read in an ISO 8859 locale's encoding: still no option but -k, and no other arguments file", function () {
    cases.forEach(({ title, targets, text }, i) => {
      const parsed = iso8859[i];
      const label = `${title}: ${JSON.stringify(targets)} → ${JSON.stringify(text)}: ${JSON.stringify(parsed)}`;
      if (parsed === undefined || 'error' in parsed) throw new Error(`pytest refused ${label}`);
      expect(parsed.options, label).to.deep.equal({});
      expect(
        parsed.arguments.slice(1).filter((argument) => /^[-@]/.test(argument)),
        label,
      ).to.deep.equal([]);
    });
  });

  it("the issue's path (U+2028 then --basetemp=victim): no option; the path left out, its test looked for in the whole suite", function () {
    // Its file's name holds "--basetemp" and "victim": words of -k's value, never an option.
    expect(utf8[0]).to.deep.include({
      arguments: ['-k', '(test_a.py and --basetemp and victim and test_a)'],
      file_or_dir: [],
      options: {},
    });
  });

  it('a lone -k word starting with - is the value of -k, in parentheses', function () {
    expect(cases[2]?.text).to.equal('-k\n(-x)\n');
    expect(utf8[2]).to.deep.include({ keyword: '(-x)', options: {}, compiles: true });
  });
});
