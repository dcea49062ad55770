/**
 * What pytest-monitor 1.6.6 sends for test/e2e/fixture-suite with `--restrict-scope-to function,module`, in the
 * order a serial run sends it (docs/api.md, "Using it from pytest-monitor"):
 * - a function metric for each test whose body finished without raising (not test_fails, not test_skipped);
 * - a module metric for each module in which a test was set up, right after that module's last function metric;
 * - item_variant: the pytest node name with "-" replaced by ", " (module metrics: ""); item_path: the module's import
 *   name (module metrics: its package part); component: the module's `pytest_monitor_component`.
 * Keep in step with the suite.
 */

export interface ExpectedItem {
  item_path: string;
  item: string;
  item_variant: string;
  item_fs_loc: string;
  kind: string;
  component: string;
}

const fn = (module: string, fsLoc: string, item: string, variant = item, component = ''): ExpectedItem => ({
  item_path: module,
  item,
  item_variant: variant,
  item_fs_loc: fsLoc,
  kind: 'function',
  component,
});

const mod = (packagePath: string, item: string, fsLoc: string, component = ''): ExpectedItem => ({
  item_path: packagePath,
  item,
  item_variant: '',
  item_fs_loc: fsLoc,
  kind: 'module',
  component,
});

export const EXPECTED_ITEMS: ExpectedItem[] = [
  fn('pkg.test_in_package', 'pkg/test_in_package.py', 'test_in_package'),
  mod('pkg', 'test_in_package', 'pkg/test_in_package.py'),
  fn('test_classes', 'test_classes.py', 'test_method_a'),
  fn('test_classes', 'test_classes.py', 'test_method_b'),
  mod('', 'test_classes', 'test_classes.py'),
  fn('test_component', 'test_component.py', 'test_write', 'test_write', 'storage'),
  fn('test_component', 'test_component.py', 'test_read', 'test_read', 'storage'),
  mod('', 'test_component', 'test_component.py', 'storage'),
  fn('test_memory', 'test_memory.py', 'test_allocates_memory'),
  mod('', 'test_memory', 'test_memory.py'),
  fn('test_outcomes', 'test_outcomes.py', 'test_passes'),
  mod('', 'test_outcomes', 'test_outcomes.py'),
  fn('test_plain', 'test_plain.py', 'test_one'),
  fn('test_plain', 'test_plain.py', 'test_two'),
  fn('test_plain', 'test_plain.py', 'test_param', 'test_param[1, 2]'),
  fn('test_plain', 'test_plain.py', 'test_param', 'test_param[2, 3]'),
  mod('', 'test_plain', 'test_plain.py'),
];

export const FUNCTION_ITEMS = EXPECTED_ITEMS.filter((m) => m.kind === 'function');
export const MODULE_ITEMS = EXPECTED_ITEMS.filter((m) => m.kind === 'module');

/** pytest's verdict on the suite: one failure, so exit code 1. */
export const PYTEST_SUMMARY = /\b1 failed, 11 passed, 1 skipped\b/;
export const PYTEST_EXIT_CODE = 1;

/** The test that allocates 50 MiB: the top memory consumer of the suite. */
export const MEMORY_HUNGRY_ITEM = 'test_allocates_memory';
export const MEMORY_HUNGRY_MIN_MB = 40;

export const COMPONENT = 'storage';

/** The identifying fields of a metric, to compare with EXPECTED_ITEMS. */
export function identity(m: ExpectedItem): ExpectedItem {
  return {
    item_path: m.item_path,
    item: m.item,
    item_variant: m.item_variant,
    item_fs_loc: m.item_fs_loc,
    kind: m.kind,
    component: m.component,
  };
}
