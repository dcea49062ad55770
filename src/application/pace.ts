/**
 * How an analysis shares the process with everything else. An analysis (regressions, creep, noise, cost over many
 * builds) may read hundreds of thousands of metrics and fold them for seconds; SQLite answers synchronously, and the
 * folding is plain JavaScript, so without pauses one analysis would hold the event loop — and every write, listing and
 * probe — until it ends. A Pace is given to each analysis: it calls `checkpoint()` between its reads and between the
 * series it judges; a checkpoint lets the event loop run once the analysis has held it for a slice, and stops the
 * analysis (throws the signal's reason) once its budget is spent or its client went away.
 */
export interface Pace {
  /** Aborted when the analysis must stop; its reason is the error the analysis throws. */
  readonly signal: AbortSignal;
  /** Resolves at once while the current slice lasts, else after the event loop ran; throws once aborted. */
  checkpoint(): Promise<void>;
}

/** How long an analysis holds the event loop between two turns of it, at most (plus one read or one series). */
const SLICE_MS = 5;

/** The analyses waiting to go on, in the order they paused. */
const paused: Array<() => void> = [];
let resuming = false;

/**
 * Resolves on a later turn of the event loop, after its I/O. The analyses of the process take these turns one at a
 * time — one slice per turn, whatever their number — so that between two slices other requests are always served,
 * and two analyses at work hold the loop no longer per turn than one.
 */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    paused.push(resolve);
    if (!resuming) {
      resuming = true;
      setImmediate(resumeOne);
    }
  });
}

function resumeOne(): void {
  const next = paused.shift();
  resuming = paused.length > 0;
  if (resuming) setImmediate(resumeOne);
  next?.();
}

/** A pace stopped by `signal`, yielding the event loop every `sliceMs`. */
export function paceOf(signal: AbortSignal, sliceMs = SLICE_MS): Pace {
  let sliceStarted = performance.now();
  return {
    signal,
    async checkpoint() {
      signal.throwIfAborted();
      if (performance.now() - sliceStarted < sliceMs) return;
      await nextTurn();
      signal.throwIfAborted();
      sliceStarted = performance.now();
    },
  };
}

/** The pace of work that owns the process (monitor-admin, tests): never stopped, still yielding between slices. */
export const unbounded = (): Pace => paceOf(new AbortController().signal);
