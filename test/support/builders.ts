import type { Context, Metric, Session, Tag } from '../../src/domain/records.js';

/** Canonical records for tests, each overridable field by field. */

export function aContext(overrides: Partial<Context> = {}): Context {
  return {
    h: '06942c58ec062abaf2e4896a7840f474',
    cpu_count: 2,
    cpu_frequency: 2599,
    cpu_type: '',
    cpu_vendor: 'Intel(R) Xeon(R) Processor',
    ram_total: 24105,
    machine_node: 'localhost',
    machine_type: 'x86_64',
    machine_arch: '64bit',
    system_info: 'Linux - 6.1.0-18-amd64',
    python_info: '3.11.2 (main, Apr 28 2025, 14:11:48) [GCC 12.2.0]',
    ...overrides,
  };
}

export function aSession(overrides: Partial<Session> = {}): Session {
  return {
    session_h: '31d804aee0c3657a2e459afb22f4e112',
    run_date: '2026-11-22T05:10:45.684828',
    scm_ref: '30585e4fae0d1c8e97ca226060d07024e2a00fb3',
    tags: [
      { key: 'pipeline_branch', value: 'unit-tests' },
      { key: 'pipeline_build_no', value: '4242' },
      { key: '__ci__', value: 'gitlabci' },
    ],
    ...overrides,
  };
}

export function aMetric(overrides: Partial<Metric> = {}): Metric {
  return {
    session_h: '31d804aee0c3657a2e459afb22f4e112',
    context_h: '06942c58ec062abaf2e4896a7840f474',
    item_start_time: '2026-11-22T05:10:45.837678',
    item_path: 'tests.test_toy',
    item: 'test_sleep',
    item_variant: 'test_sleep',
    item_fs_loc: 'tests/test_toy.py',
    kind: 'function',
    component: '',
    total_time: 0.25,
    user_time: 0.01,
    kernel_time: 0.002,
    cpu_usage: 0.048,
    mem_usage: 0.5,
    ...overrides,
  };
}

/** Tags of a session in a CI pipeline/build. */
export function ciTags(pipeline: string, build: string) {
  return [
    { key: 'pipeline_branch', value: pipeline },
    { key: 'pipeline_build_no', value: build },
  ];
}

/** A context as the API reads it: its eleven fields, then `context_h` (= h, the name the original's Python client reads). */
export type ContextRead = Context & { context_h: string };
/** A tag as the API reads it: `name` (= key, the name the original's Python client reads) beside `key`. */
export type TagRead = Tag & { name: string };
/** A session as the API reads it. */
export type SessionRead = Omit<Session, 'tags'> & { tags: TagRead[] };

export const contextAsRead = (context: Context): ContextRead => ({ ...context, context_h: context.h });

export const tagsAsRead = (tags: Tag[]): TagRead[] =>
  tags.map((tag) => ({ key: tag.key, value: tag.value, name: tag.key }));

export const sessionAsRead = (session: Session): SessionRead => ({ ...session, tags: tagsAsRead(session.tags) });
