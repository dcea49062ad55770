import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { rerunFile, type RerunTarget } from '../../src/cli/check/rerun-file.js';
import { childEnv, clientPython } from '../e2e/client.js';

/**
 * The re-run file of `check --rerun-file`: what it holds, and, with the real pytest of the client venv
 * (scripts/client-venv.sh), what it selects from a suite where pytest-monitor's names are ambiguous — methods of
 * classes (no class name is stored), parametrized tests whose ids hold `-` (stored as `, `) or `, `, tests in
 * packages, the same name in several files and classes, a test named after its file. For each set of flagged tests
 * it must select every test pytest-monitor would have stored under those names (never one less); the tests it runs
 * besides are checked to be the ones rerun-file.ts says it may run.
 */

const execFileAsync = promisify(execFile);

const SUITE: Record<string, string> = {
  'pytest.ini': '[pytest]\naddopts = -p no:cacheprovider\n',
  'test_math.py': `import pytest


def test_m():
    pass


def test_m2():
    pass


def test_math():
    pass


class TestX:
    def test_m(self):
        pass

    def test_only_x(self):
        pass


class TestY:
    def test_m(self):
        pass


@pytest.mark.parametrize("a,b", [(1, 2), (10, 2), (1, 22), (3, 4)])
def test_p(a, b):
    pass


@pytest.mark.parametrize("s", ["a, b", "a-b", "c"])
def test_s(s):
    pass


@pytest.mark.parametrize("n", [-1, 1])
def test_neg(n):
    pass


class TestParam:
    @pytest.mark.parametrize("k", ["x-y", "z"])
    def test_k(self, k):
        pass
`,
  'pkg/__init__.py': '',
  'pkg/test_math.py': `def test_m():
    pass


def test_pkg_only():
    pass
`,
  'pkg/sub/__init__.py': '',
  'pkg/sub/test_deep.py': `import pytest


class TestDeep:
    def test_m(self):
        pass


@pytest.mark.parametrize("v", [1, 2])
def test_v(v):
    pass
`,
  'other/test_other.py': `def test_m():
    pass


def test_other_thing():
    pass
`,
  'test_names.py': `import pytest


def test_é():
    pass


@pytest.mark.parametrize("w", ["ü", "and", "or x", "x, and"])
def test_w(w):
    pass
`,
};

/** A collected test: its node id, and the file and variant pytest-monitor stores for it. */
interface Collected {
  nodeid: string;
  file: string;
  variant: string;
}

/** What pytest-monitor stores of a node id (relative to the rootdir): its file, its name with `-` as `, `. */
function stored(nodeid: string): Collected {
  const parts = nodeid.split('::');
  return { nodeid, file: parts[0] ?? '', variant: (parts[parts.length - 1] ?? '').replace(/-/g, ', ') };
}

describe('check --rerun-file: the pytest arguments file of the tests to re-run', function () {
  describe('its text', function () {
    it('is -k and one expression, then the flagged files, each on a line, each test and file once', function () {
      const text = rerunFile([
        { item_fs_loc: 'pkg/test_b.py', item_variant: 'test_f' },
        { item_fs_loc: 'test_a.py', item_variant: 'test_p[1, 2]' },
        // The same test flagged for two resources: once.
        { item_fs_loc: 'pkg/test_b.py', item_variant: 'test_f' },
      ]);
      expect(text).to.equal(
        ['-k', '(test_a.py and test_p[1 and 2]) or (test_b.py and test_f)', 'pkg/test_b.py', 'test_a.py', ''].join(
          '\n',
        ),
      );
    });

    it('keeps a path from being read as an option or as another arguments file', function () {
      const text = rerunFile([
        { item_fs_loc: '-p evil.py', item_variant: 'test_a' },
        { item_fs_loc: '@more.txt', item_variant: 'test_b' },
      ]);
      expect(text.split('\n').slice(2)).to.deep.equal(['./-p evil.py', './@more.txt', '']);
    });

    it('holds only words pytest accepts in -k: no quote, comma, space, parenthesis or reserved word inside one', function () {
      const text = rerunFile([{ item_fs_loc: 'test_a.py', item_variant: 'test_w[or x, "(y)", and, and]' }]);
      // `test_w[or` and `and]` are words (pytest reads a word whole); the `and` standing alone is left out.
      expect(text.split('\n')[1]).to.equal('(test_a.py and test_w[or and x and y and and])');
    });

    it('holds only ASCII words in -k (Python reads other letters by its own Unicode version), and never starts with -', function () {
      // A letter of a newer Unicode than the Python running pytest knows would make it refuse the whole expression.
      expect(rerunFile([{ item_fs_loc: 'tést_a.py', item_variant: 'test_é\u{32546}x' }])).to.equal(
        '-k\n(t and st_a.py and test_ and x)\ntést_a.py\n',
      );
      expect(rerunFile([{ item_variant: '-x' }, { item_variant: '--y' }])).to.equal('-k\n(--y or -x)\n');
    });

    it('has no line break inside a line: a path holding one is left out, and the whole suite searched instead', function () {
      const text = rerunFile([
        { item_fs_loc: 'test_a.py', item_variant: 'test_a' },
        { item_fs_loc: 'evil\n--rootdir=/\n.py', item_variant: 'test_b' },
      ]);
      expect(text).to.equal('-k\n(.py and test_b) or (test_a.py and test_a)\n');
      // Every line break of Python's str.splitlines(), which argparse splits the file at.
      for (const lineBreak of ['\r', '\v', '\f', '\x1c', '\x1d', '\x1e', '\x85', '\u2028', '\u2029'])
        expect(rerunFile([{ item_fs_loc: `a.py${lineBreak}-p evil`, item_variant: 'test_a' }])).to.equal(
          '-k\n(a.py and -p and evil and test_a)\n',
        );
    });

    it('searches the whole suite for a test whose file is not known (an older service)', function () {
      expect(
        rerunFile([{ item_variant: 'test_a[1, 2]' }, { item_fs_loc: 'test_b.py', item_variant: 'test_b' }]),
      ).to.equal('-k\n(test_a[1 and 2]) or (test_b.py and test_b)\n');
    });
  });

  describe('what the real pytest selects with it (pytest 9.1, the client venv)', function () {
    this.timeout(60_000);
    let python = '';
    let dir = '';
    let all: Collected[] = [];

    /** The node ids pytest collects with `args` in the suite, sorted. */
    const collect = async (args: string[]): Promise<string[]> => {
      const { stdout } = await execFileAsync(python, ['-m', 'pytest', '--collect-only', '-q', ...args], {
        cwd: dir,
        env: childEnv({}),
      });
      return stdout
        .split('\n')
        .filter((line) => line.includes('::'))
        .sort();
    };

    /** Writes the file for `flagged` and returns what `pytest @file` selects, and what it should at least. */
    const select = async (
      flagged: RerunTarget[],
    ): Promise<{ selected: string[]; exact: string[]; extra: string[] }> => {
      const file = join(dir, 'monitor-rerun.txt');
      writeFileSync(file, rerunFile(flagged));
      const selected = await collect([`@${file}`]);
      const exact = all
        .filter((test) => flagged.some((f) => f.item_fs_loc === test.file && f.item_variant === test.variant))
        .map((test) => test.nodeid)
        .sort();
      return { selected, exact, extra: selected.filter((nodeid) => !exact.includes(nodeid)) };
    };

    before(async function () {
      this.timeout(6 * 60_000);
      python = await clientPython();
      dir = mkdtempSync(join(tmpdir(), 'monitor-rerun-suite-'));
      for (const [name, text] of Object.entries(SUITE)) {
        mkdirSync(dirname(join(dir, name)), { recursive: true });
        writeFileSync(join(dir, name), text);
      }
      all = (await collect([])).map(stored);
      expect(all).to.have.length(29);
    });
    after(function () {
      if (dir !== '') rmSync(dir, { recursive: true, force: true });
    });

    it('a module-level test: every test stored under its name — the methods of the same name too — and the tests whose names hold it', async function () {
      const { selected, exact, extra } = await select([{ item_fs_loc: 'test_math.py', item_variant: 'test_m' }]);
      // pytest-monitor stores TestX::test_m and TestY::test_m as test_math.py's "test_m": they are the same test to it.
      expect(exact).to.deep.equal([
        'test_math.py::TestX::test_m',
        'test_math.py::TestY::test_m',
        'test_math.py::test_m',
      ]);
      expect(selected).to.include.members(exact);
      // Its module's name (test_math.py) holds "test_m": the whole file runs, and no other file.
      expect(extra).to.have.length(all.filter((test) => test.file === 'test_math.py').length - exact.length);
      expect(selected.every((nodeid) => nodeid.startsWith('test_math.py::'))).to.equal(true);
    });

    it('a method of a class, and a test in a package: only their files, only the names holding theirs', async function () {
      const { selected, exact, extra } = await select([
        { item_fs_loc: 'pkg/sub/test_deep.py', item_variant: 'test_m' },
        { item_fs_loc: 'other/test_other.py', item_variant: 'test_other_thing' },
      ]);
      expect(exact).to.deep.equal(['other/test_other.py::test_other_thing', 'pkg/sub/test_deep.py::TestDeep::test_m']);
      expect(selected).to.deep.equal(exact);
      expect(extra).to.deep.equal([]);
    });

    it('the same name in three files (two of the same name, one in a package): only the flagged file', async function () {
      const { selected, exact } = await select([{ item_fs_loc: 'pkg/test_math.py', item_variant: 'test_m' }]);
      expect(exact).to.deep.equal(['pkg/test_math.py::test_m']);
      // test_pkg_only too: its module's name, test_math.py, holds "test_m".
      expect(selected).to.deep.equal([...exact, 'pkg/test_math.py::test_pkg_only']);
    });

    it("parametrized: an id with '-' (stored with ', '), and a parameter holding ', ' or '-' (both stored alike)", async function () {
      const byDash = await select([{ item_fs_loc: 'test_math.py', item_variant: 'test_p[1, 2]' }]);
      expect(byDash.exact).to.deep.equal(['test_math.py::test_p[1-2]']);
      expect(byDash.selected).to.include.members(byDash.exact);
      // Each part is matched apart: the ids holding "test_p[1" and "2]".
      expect(byDash.extra).to.deep.equal(['test_math.py::test_p[1-22]', 'test_math.py::test_p[10-2]']);

      const byComma = await select([{ item_fs_loc: 'test_math.py', item_variant: 'test_s[a, b]' }]);
      expect(byComma.exact).to.deep.equal(['test_math.py::test_s[a, b]', 'test_math.py::test_s[a-b]']);
      expect(byComma.selected).to.deep.equal(byComma.exact);

      const negative = await select([{ item_fs_loc: 'test_math.py', item_variant: 'test_neg[, 1]' }]);
      expect(negative.exact).to.deep.equal(['test_math.py::test_neg[-1]']);
      expect(negative.selected).to.include.members(negative.exact);
      expect(negative.extra).to.deep.equal(['test_math.py::test_neg[1]']);

      const inClass = await select([{ item_fs_loc: 'test_math.py', item_variant: 'test_k[x, y]' }]);
      expect(inClass.exact).to.deep.equal(['test_math.py::TestParam::test_k[x-y]']);
      expect(inClass.selected).to.deep.equal(inClass.exact);
    });

    it('names pytest escapes or that hold its reserved words', async function () {
      const names = all.filter((test) => test.file === 'test_names.py');
      this.timeout((names.length + 1) * 20_000);
      for (const test of names) {
        const { selected } = await select([{ item_fs_loc: test.file, item_variant: test.variant }]);
        expect(selected, test.nodeid).to.include(test.nodeid);
        expect(selected.length, test.nodeid).to.be.below(names.length + 1);
      }
    });

    it('every test of the suite flagged one at a time, then all at once: none left out, nothing outside their files', async function () {
      // One pytest collection per test (about 1.5 s each on an idle machine, several on a loaded one).
      this.timeout((all.length + 1) * 20_000);
      for (const test of all) {
        const { selected, exact } = await select([{ item_fs_loc: test.file, item_variant: test.variant }]);
        expect(selected, test.nodeid).to.include.members(exact);
        expect(selected.every((nodeid) => stored(nodeid).file === test.file)).to.equal(true);
      }
      const everything = await select(all.map((test) => ({ item_fs_loc: test.file, item_variant: test.variant })));
      expect(everything.selected).to.deep.equal(all.map((test) => test.nodeid).sort());
    });
  });
});
