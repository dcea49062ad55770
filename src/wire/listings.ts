import type { HistoryPoint, Metric, Session } from '../domain/records.js';
import type { Paging } from './paging.js';

/**
 * The parts of the listing routes' answers the dashboard reads (their schemas are the listing kinds' envelopes,
 * api/route-kinds.ts and api/schemas.ts pageSchema).
 */

export interface CountAnswer {
  count: number;
}

export interface SessionsPage extends Paging {
  sessions: Session[];
}

/** The sessions of a build: their ids. */
export interface SessionIdsPage extends Paging {
  sessions: string[];
}

export interface PipelinesPage extends Paging {
  pipelines: string[];
}

export interface BuildsPage extends Paging {
  builds: Array<{ id: string }>;
}

export interface MetricsPage extends Paging {
  metrics: Metric[];
}

interface MachineClass {
  machine_class: string;
  contexts: string[];
}

export interface ClassesPage extends Paging {
  classes: MachineClass[];
}

export interface History {
  points: HistoryPoint[];
}
