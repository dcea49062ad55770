/**
 * What an analysis of one unit is about, cost or regressions alike: one build of a pipeline (all its sessions), or
 * one session.
 */
export type UnitTarget = { pipeline: string; build: string } | { session: string };
