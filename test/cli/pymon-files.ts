import BetterSqlite3 from 'better-sqlite3';

/**
 * pytest-monitor's local databases, table for table as the plugin creates them (pytest_monitor/handler.py of 1.6.6
 * for the current DDL, older releases for the older layouts), in each layout an old file may still have.
 */
export type PymonLayout = '1.0' | '1.1' | '1.6';

const CONTEXTS = `CREATE TABLE IF NOT EXISTS EXECUTION_CONTEXTS (
   ENV_H varchar(64) primary key not null unique,
   CPU_COUNT integer,
   CPU_FREQUENCY_MHZ integer,
   CPU_TYPE varchar(64),
   CPU_VENDOR varchar(256),
   RAM_TOTAL_MB integer,
   MACHINE_NODE varchar(512),
   MACHINE_TYPE varchar(32),
   MACHINE_ARCH varchar(16),
   SYSTEM_INFO varchar(256),
   PYTHON_INFO varchar(512)
);`;

const sessions = (descriptionType: string): string => `CREATE TABLE IF NOT EXISTS TEST_SESSIONS(
    SESSION_H varchar(64) primary key not null unique, -- Session identifier
    RUN_DATE varchar(64), -- Date of test run
    SCM_ID varchar(128), -- SCM change id
    RUN_DESCRIPTION ${descriptionType}
);`;

const METRICS = `CREATE TABLE IF NOT EXISTS TEST_METRICS (
    SESSION_H varchar(64), -- Session identifier
    ENV_H varchar(64), -- Environment description identifier
    ITEM_START_TIME varchar(64), -- Effective start time of the test
    ITEM_PATH varchar(4096), -- Path of the item, following Python import specification
    ITEM varchar(2048), -- Name of the item
    ITEM_VARIANT varchar(2048), -- Optional parametrization of an item.
    ITEM_FS_LOC varchar(2048), -- Relative path from pytest invocation directory to the item's module.
    KIND varchar(64), -- Package, Module or function
    COMPONENT varchar(512) NULL, -- Tested component if any
    TOTAL_TIME float, -- Total time spent running the item
    USER_TIME float, -- time spent in user space
    KERNEL_TIME float, -- time spent in kernel space
    CPU_USAGE float, -- cpu usage
    MEM_USAGE float, -- Max resident memory used.
    FOREIGN KEY (ENV_H) REFERENCES EXECUTION_CONTEXTS(ENV_H),
    FOREIGN KEY (SESSION_H) REFERENCES TEST_SESSIONS(SESSION_H)
);`;

/** 1.0.0–1.0.1: no sessions; each metric names its run by date and SCM id. */
const METRICS_1_0 = `CREATE TABLE IF NOT EXISTS TEST_METRICS (
    RUN_DATE varchar(64),
    ENV_H varchar(64),
    SCM_ID varchar(128),
    ITEM_START_TIME varchar(64),
    ITEM varchar(4096),
    KIND varchar(64),
    COMPONENT varchar(512) NULL,
    TOTAL_TIME float,
    USER_TIME float,
    KERNEL_TIME float,
    CPU_USAGE float,
    MEM_USAGE float,
    FOREIGN KEY (ENV_H) REFERENCES EXECUTION_CONTEXTS(ENV_H)
);`;

export type Value = string | number | null;

export interface PymonRows {
  /** ENV_H, CPU_COUNT, CPU_FREQUENCY_MHZ, CPU_TYPE, CPU_VENDOR, RAM_TOTAL_MB, MACHINE_NODE, MACHINE_TYPE, MACHINE_ARCH, SYSTEM_INFO, PYTHON_INFO */
  contexts: Value[][];
  /** SESSION_H, RUN_DATE, SCM_ID, RUN_DESCRIPTION (not in 1.0). */
  sessions?: Value[][];
  /** 1.1+: SESSION_H, ENV_H, ITEM_START_TIME, ITEM_PATH, ITEM, ITEM_VARIANT, ITEM_FS_LOC, KIND, COMPONENT, 5 measures.
   *  1.0: RUN_DATE, ENV_H, SCM_ID, ITEM_START_TIME, ITEM, KIND, COMPONENT, 5 measures. */
  metrics: Value[][];
}

export function writePymon(path: string, layout: PymonLayout, rows: PymonRows): void {
  const db = new BetterSqlite3(path);
  // Python's sqlite3 (the plugin's) leaves foreign keys unenforced; better-sqlite3 turns them on.
  db.pragma('foreign_keys = OFF');
  try {
    db.exec(CONTEXTS);
    if (layout === '1.0') db.exec(METRICS_1_0);
    else db.exec(`${sessions(layout === '1.6' ? 'json' : 'varchar(1024)')}\n${METRICS}`);
    const insert = (table: string, values: Value[][]): void => {
      for (const row of values)
        db.prepare(`INSERT INTO ${table} VALUES (${row.map(() => '?').join(', ')})`).run(...row);
    };
    insert('EXECUTION_CONTEXTS', rows.contexts);
    if (layout !== '1.0') insert('TEST_SESSIONS', rows.sessions ?? []);
    insert('TEST_METRICS', rows.metrics);
  } finally {
    db.close();
  }
}

/** A context row as the plugin writes it: the frequency is psutil's float. */
export function contextRow(h: string, frequency = 2599.998): Value[] {
  return [
    h,
    2,
    frequency,
    '',
    'Intel(R) Xeon(R) Processor',
    24105,
    'localhost',
    'x86_64',
    '64bit',
    'Linux - 6.1.0-18-amd64',
    '3.11.2 (main, Apr 28 2025, 14:11:48) [GCC 12.2.0]',
  ];
}

export function metricRow(
  session: string,
  context: string,
  item: string,
  overrides: { variant?: string; component?: Value; kind?: string; total?: Value } = {},
): Value[] {
  return [
    session,
    context,
    '2026-11-22T05:10:45.837678',
    'test_basic',
    item,
    overrides.variant ?? item,
    'test_basic.py',
    overrides.kind ?? 'function',
    overrides.component === undefined ? '' : overrides.component,
    overrides.total === undefined ? 0.25 : overrides.total,
    0.01,
    0.0,
    0.04,
    0.40625,
  ];
}
