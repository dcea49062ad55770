import type { HistoryPoint, Metric, Session } from '../../domain/records.js';

/** The parts of the API's answers the dashboard reads. */

export interface CountAnswer {
  count: number;
}

interface Paged {
  next_url: string | null;
  total_page: number;
}

export interface SessionsPage extends Paged {
  sessions: Session[];
}

/** The sessions of a build: their ids. */
export interface SessionIdsPage extends Paged {
  sessions: string[];
}

export interface PipelinesPage extends Paged {
  pipelines: string[];
}

export interface BuildsPage extends Paged {
  builds: Array<{ id: string }>;
}

export interface MetricsPage extends Paged {
  metrics: Metric[];
}

export interface Finding {
  item_variant: string;
  component: string;
  context_h: string;
  resource: string;
  value: number;
  limit: number;
  change_pct: number | null;
  baseline: { median: number; n: number };
}

export interface RegressionReport extends Paged {
  regressions: Finding[];
  improvements: Finding[];
  compared: number;
  insufficient_history: number;
  resources: string[];
  model: { name: string };
}

export interface History {
  points: HistoryPoint[];
}
