/**
 * Figures of a recovery: how soon and how fully a client's calls succeed
 * after its upstream came back, and how hard it hits the upstream in its
 * first second back. Pure functions over call records and server-side
 * arrival times (epoch ms), so they can be tested without a run.
 */

/** What the figures need of a call. */
export interface CallOutcome {
  /** When the call started (epoch ms). */
  startedAt: number;
  /** How long it took, ms. */
  latencyMs: number;
  /** Whether it succeeded. */
  ok: boolean;
}

/**
 * Ms from `at` until the first call that succeeded at or after `at`
 * finished (whenever it started), or `undefined` when none did.
 */
export function firstSuccessAfter(calls: readonly CallOutcome[], at: number): number | undefined {
  let first = Number.POSITIVE_INFINITY;
  for (const c of calls) {
    const end = c.startedAt + c.latencyMs;
    if (c.ok && end >= at && end < first) first = end;
  }
  return Number.isFinite(first) ? first - at : undefined;
}

/** Share of the calls started in `[at + fromMs, at + toMs)` that succeeded, or `undefined` when none started. */
export function successBetween(
  calls: readonly CallOutcome[],
  at: number,
  fromMs: number,
  toMs: number,
): number | undefined {
  let started = 0;
  let ok = 0;
  for (const c of calls) {
    if (c.startedAt < at + fromMs || c.startedAt >= at + toMs) continue;
    started++;
    if (c.ok) ok++;
  }
  return started === 0 ? undefined : ok / started;
}

/** How many of `times` fall in `[from, to)`. */
export function countBetween(times: readonly number[], from: number, to: number): number {
  let n = 0;
  for (const t of times) if (t >= from && t < to) n++;
  return n;
}

/**
 * The busiest `binMs` bin of `arrivals` in `[at, at + windowMs)`, as a rate
 * per second (a bin of 100 ms with 30 arrivals is 300/s); 0 without arrivals.
 */
export function peakRate(
  arrivals: readonly number[],
  at: number,
  windowMs = 1_000,
  binMs = 100,
): number {
  const bins = new Array<number>(Math.ceil(windowMs / binMs)).fill(0);
  for (const t of arrivals) {
    if (t < at || t >= at + windowMs) continue;
    const i = Math.floor((t - at) / binMs);
    bins[i] = (bins[i] ?? 0) + 1;
  }
  return (Math.max(0, ...bins) * 1_000) / binMs;
}

/**
 * Server-counted attempts per call of the calls started in `[from, to)`:
 * their attempts (by call id) over their number; `undefined` when none started.
 */
export function attemptsPerCall(
  calls: readonly (CallOutcome & { callId: string })[],
  attempts: ReadonlyMap<string, number>,
  from: number,
  to: number,
): number | undefined {
  let n = 0;
  let sum = 0;
  for (const c of calls) {
    if (c.startedAt < from || c.startedAt >= to) continue;
    n++;
    sum += attempts.get(c.callId) ?? 0;
  }
  return n === 0 ? undefined : sum / n;
}
