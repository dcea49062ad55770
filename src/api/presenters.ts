import type { Build, Context, Metric, Session } from '../domain/records.js';

/**
 * Stored record → read shape (CONTRACT.md §2.2). The only place the API's field names live: each presenter
 * whitelists what it emits, in the documented order, whatever a store hands back.
 */

export function presentContext(c: Context) {
  return {
    h: c.h,
    cpu_count: c.cpu_count,
    cpu_frequency: c.cpu_frequency,
    cpu_type: c.cpu_type,
    cpu_vendor: c.cpu_vendor,
    ram_total: c.ram_total,
    machine_node: c.machine_node,
    machine_type: c.machine_type,
    machine_arch: c.machine_arch,
    system_info: c.system_info,
    python_info: c.python_info,
  };
}

export function presentSession(s: Session) {
  return {
    session_h: s.session_h,
    run_date: s.run_date,
    scm_ref: s.scm_ref,
    tags: s.tags.map((t) => ({ key: t.key, value: t.value })),
  };
}

export function presentMetric(m: Metric) {
  return {
    session_h: m.session_h,
    context_h: m.context_h,
    item_start_time: m.item_start_time,
    item_path: m.item_path,
    item: m.item,
    item_variant: m.item_variant,
    item_fs_loc: m.item_fs_loc,
    kind: m.kind,
    component: m.component,
    total_time: m.total_time,
    user_time: m.user_time,
    kernel_time: m.kernel_time,
    cpu_usage: m.cpu_usage,
    mem_usage: m.mem_usage,
  };
}

export function presentBuild(b: Build) {
  return { id: b.id, sessions: [...b.sessions] };
}
