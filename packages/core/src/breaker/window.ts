import type { FailureRateWindow, SlowCallRule } from './types.js';

/** Outcome code bit: the call failed. @internal */
export const CODE_FAILED = 1;
/** Outcome code bit: the call was slow. @internal */
export const CODE_SLOW = 2;

/**
 * Recent outcomes of a closed circuit, counted by code (fast success, fast
 * failure, slow success, slow failure). Opaque: read it through the breaker.
 */
export type RateWindowState =
  | {
      /** A count window over the last `size` calls. */
      readonly kind: 'count';
      /** Ring buffer of outcome codes. */
      readonly codes: Uint8Array;
      /** Next slot to write. */
      head: number;
      /** Slots written so far (<= size). */
      filled: number;
      /** Calls in the ring per outcome code. */
      readonly totals: Float64Array;
    }
  | {
      /** A time window cut into ten buckets. */
      readonly kind: 'time';
      /** Width of one bucket in ms. */
      readonly bucketMs: number;
      /** Absolute bucket number each slot currently holds. */
      readonly stamps: Float64Array;
      /** Calls per slot and outcome code (4 per slot). */
      readonly counts: Float64Array;
      /** The bucket `totals` were summed for (`NaN` before any). */
      current: number;
      /** Calls per outcome code in the buckets live at `current`. */
      readonly totals: Float64Array;
    };

/**
 * A time window is cut into this many buckets; calls expire a bucket at a
 * time, so the window spans between `(B - 1) / B × sizeMs` and `sizeMs`, never more.
 */
const BUCKETS = 10;

/** An empty window for `config`. @internal */
export function createWindow(config: FailureRateWindow): RateWindowState {
  if (config.type === 'count') {
    return {
      kind: 'count',
      codes: new Uint8Array(config.size),
      head: 0,
      filled: 0,
      totals: new Float64Array(4),
    };
  }
  return {
    kind: 'time',
    bucketMs: config.sizeMs / BUCKETS,
    stamps: new Float64Array(BUCKETS).fill(Number.NEGATIVE_INFINITY),
    counts: new Float64Array(BUCKETS * 4),
    current: Number.NaN,
    totals: new Float64Array(4),
  };
}

/** A deep copy, for the immutable API. @internal */
export function cloneWindow(w: RateWindowState): RateWindowState {
  if (w.kind === 'count') {
    return { ...w, codes: w.codes.slice(), totals: w.totals.slice() };
  }
  return { ...w, stamps: w.stamps.slice(), counts: w.counts.slice(), totals: w.totals.slice() };
}

/** Forgets every recorded call, in place. @internal */
export function clearWindow(w: RateWindowState): void {
  if (w.kind === 'count') {
    w.head = 0;
    w.filled = 0;
    w.totals.fill(0);
  } else {
    w.stamps.fill(Number.NEGATIVE_INFINITY);
    w.counts.fill(0);
    w.current = Number.NaN;
    w.totals.fill(0);
  }
}

function bucketOf(w: { bucketMs: number }, now: number): number {
  return Math.floor(now / w.bucketMs);
}

function slotOf(bucket: number): number {
  return ((bucket % BUCKETS) + BUCKETS) % BUCKETS;
}

type TimeWindow = Extract<RateWindowState, { kind: 'time' }>;

/**
 * Makes `w.totals` the counts of the buckets live at `bucket`: those in
 * `(bucket - BUCKETS, bucket]`. Summed afresh, so a clock that jumps many
 * buckets or moves back (a live bucket may then hold calls of the "future")
 * counts exactly the buckets it would in a full scan; it runs only when the
 * current bucket changes (once per `bucketMs` on a steady clock), so a call
 * costs O(1) amortised.
 */
function moveTo(w: TimeWindow, bucket: number): void {
  w.current = bucket;
  const totals = w.totals;
  totals.fill(0);
  for (let slot = 0; slot < BUCKETS; slot++) {
    const stamp = w.stamps[slot] as number;
    if (stamp > bucket - BUCKETS && stamp <= bucket) {
      const base = slot * 4;
      totals[0]! += w.counts[base] as number;
      totals[CODE_FAILED]! += w.counts[base + CODE_FAILED] as number;
      totals[CODE_SLOW]! += w.counts[base + CODE_SLOW] as number;
      totals[CODE_SLOW | CODE_FAILED]! += w.counts[base + (CODE_SLOW | CODE_FAILED)] as number;
    }
  }
}

/** Records one outcome `code` at `now`, in place. @internal */
export function recordCall(w: RateWindowState, code: number, now: number): void {
  if (w.kind === 'count') {
    const size = w.codes.length;
    if (w.filled === size) w.totals[w.codes[w.head] as number]! -= 1;
    else w.filled += 1;
    w.codes[w.head] = code;
    w.totals[code]! += 1;
    w.head = (w.head + 1) % size;
    return;
  }
  const bucket = bucketOf(w, now);
  if (bucket !== w.current) moveTo(w, bucket);
  const slot = slotOf(bucket);
  if (w.stamps[slot] !== bucket) {
    // The slot still holds an expired bucket (or one from a clock that moved back): reuse it.
    // Its stamp is congruent to `bucket` yet not `bucket`, so outside the live range: not in `totals`.
    w.stamps[slot] = bucket;
    w.counts.fill(0, slot * 4, slot * 4 + 4);
  }
  w.counts[slot * 4 + code]! += 1;
  w.totals[code]! += 1;
}

/**
 * True when the window's rate rule trips at `now`: at least `minimumCalls`
 * calls, and (failures + slow successes) / calls reaching
 * `failureRateThreshold` (judged only when `failures` is true), or slow calls /
 * calls reaching `slowCall.rateThreshold`. Reads the running totals (a time
 * window first moves them to `now`'s bucket when that changed).
 * @internal
 */
export function windowTripped(
  w: RateWindowState,
  config: FailureRateWindow,
  slowCall: SlowCallRule | undefined,
  now: number,
  failures = true,
): boolean {
  if (w.kind === 'time') {
    const bucket = bucketOf(w, now);
    if (bucket !== w.current) moveTo(w, bucket);
  }
  const totals = w.totals;
  const fastOk = totals[0] as number;
  const fastFail = totals[CODE_FAILED] as number;
  const slowOk = totals[CODE_SLOW] as number;
  const slowFail = totals[CODE_SLOW | CODE_FAILED] as number;
  const calls = fastOk + fastFail + slowOk + slowFail;
  const minimumCalls = config.minimumCalls ?? (config.type === 'count' ? config.size : 1);
  if (calls === 0 || calls < minimumCalls) return false;
  if (failures && (fastFail + slowFail + slowOk) / calls >= config.failureRateThreshold) {
    return true;
  }
  return slowCall !== undefined && (slowOk + slowFail) / calls >= slowCall.rateThreshold;
}
