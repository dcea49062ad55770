/** A build, pipeline or session named by the caller that the store does not hold: the API answers 404. */
export class UnknownTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnknownTargetError';
  }
}

/** Why an analysis stopped before its end. */
export type StopReason = 'budget' | 'client';

/**
 * An analysis stopped before its end: its time budget (ANALYSIS_TIMEOUT_MS) ran out, or its client went away. The API
 * answers 503 (a client that left reads no answer).
 */
export class AnalysisStoppedError extends Error {
  constructor(
    readonly reason: StopReason,
    message: string,
  ) {
    super(message);
    this.name = 'AnalysisStoppedError';
  }
}
