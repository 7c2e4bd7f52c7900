/**
 * Why a circuit opened in the soak (issue 19): for every opening, the last
 * outcomes its breaker counted, the last failures the lane saw (with their
 * error), when the lane last succeeded, how many calls were in flight, and
 * the event-loop stalls of the client and of the servers' process around it.
 * Cheap enough to stay on: one ring slot written per counted outcome, one
 * record per failed call, a 10 ms ticker.
 */
import type { CallOutcome, CircuitBreaker } from '@breakwater/core';
import { fmt } from '../../harness/report.js';

/** An event-loop stall: when it ended (ms since the soak started) and how long it was. */
export interface Stall {
  atMs: number;
  ms: number;
}

/** One outcome a breaker was told (`release`). */
export interface Counted {
  atMs: number;
  outcome: CallOutcome;
  /** The call's duration as the adapter measured it, if it passed one. */
  durationMs: number | undefined;
  /** The circuit's state when the outcome arrived. */
  state: string;
}

/** A call of the lane that failed (refusals left out). */
export interface LaneFailure {
  startedMs: number;
  endedMs: number;
  error: string;
}

/** Everything known about one opening. */
export interface OpeningRecord {
  atMs: number;
  circuit: string;
  /** `streak`: the consecutive-failure rule (N in a row); `window`: the failure-rate window. */
  rule: string;
  consecutiveFailures: number;
  /** The last outcomes counted before it opened, oldest first. */
  counted: Counted[];
  /** The lane's last failed calls before it opened, oldest first. */
  failures: LaneFailure[];
  /** When the lane last saw a call succeed (-1: never). */
  lastSuccessMs: number;
  inFlight: number;
  /** Stalls of the client's loop from 3 s before to 1 s after (filled in at the end). */
  clientStalls: Stall[];
  /** Stalls of the servers' process in the same span (filled in at the end). */
  serverStalls: Stall[];
}

/** Counted outcomes kept per opening (enough to show a whole streak of the standard circuit). */
const KEEP = 40;
const RING = 64;
/** Lane failures kept per opening. */
const KEEP_FAILURES = 10;
const TICK_MS = 10;
const STALL_MS = 50;
/** The span of stalls shown around an opening. */
const BEFORE_MS = 3_000;
const AFTER_MS = 1_000;

/** Records the outcomes, failures and stalls of one lane's soak. */
export class OpeningRecorder {
  readonly openings: OpeningRecord[] = [];
  readonly stalls: Stall[] = [];
  inFlight = 0;
  private lastSuccessMs = -1;
  // Preallocated slots, overwritten in turn: no allocation per counted outcome.
  private readonly counted: Counted[] = Array.from({ length: RING }, () => ({
    atMs: 0,
    outcome: 'neutral' as CallOutcome,
    durationMs: undefined,
    state: '',
  }));
  private countedNext = 0;
  private countedSeen = 0;
  private readonly failures: LaneFailure[] = [];
  private readonly ticker: NodeJS.Timeout;
  private lastTick: number;

  constructor(private readonly start: number) {
    this.lastTick = performance.now();
    this.ticker = setInterval(() => {
      const now = performance.now();
      const late = now - this.lastTick - TICK_MS;
      this.lastTick = now;
      if (late >= STALL_MS) this.stalls.push({ atMs: now - this.start, ms: Math.round(late) });
    }, TICK_MS);
  }

  /** Milliseconds since the soak started. */
  now(): number {
    return performance.now() - this.start;
  }

  /**
   * Notes every outcome `breaker` is told; when it opens, keeps a record of
   * why and hands it to `onOpen`. Returns a function that stops watching.
   */
  watch(breaker: CircuitBreaker, circuit: string, onOpen: (record: OpeningRecord) => void) {
    const release = breaker.release.bind(breaker);
    // Every adapter and `protect` report outcomes through the instance's `release`.
    (breaker as { release: CircuitBreaker['release'] }).release = (permit, report) => {
      if (permit >= 0) {
        const slot = this.counted[this.countedNext] as Counted;
        slot.atMs = this.now();
        slot.outcome = report.outcome;
        slot.durationMs = report.durationMs;
        slot.state = breaker.toJSON().state;
        this.countedNext = (this.countedNext + 1) % RING;
        this.countedSeen++;
      }
      release(permit, report);
    };
    const subscription = breaker.onStateChange((change) => {
      if (change.to !== 'open') return;
      const streak = breaker.toJSON().consecutiveFailures;
      const record: OpeningRecord = {
        atMs: this.now(),
        circuit,
        rule:
          streak >= 5 ? `streak (${streak} in a row)` : `failure-rate window (streak ${streak})`,
        consecutiveFailures: streak,
        counted: this.lastCounted(),
        failures: this.failures.slice(-KEEP_FAILURES),
        lastSuccessMs: this.lastSuccessMs,
        inFlight: this.inFlight,
        clientStalls: [],
        serverStalls: [],
      };
      this.openings.push(record);
      onOpen(record);
    });
    return () => {
      subscription.dispose();
      delete (breaker as { release?: unknown }).release;
    };
  }

  /** A call of the lane settled: `error` undefined when it succeeded. */
  settled(startedMs: number, error: string | undefined): void {
    const now = this.now();
    if (error === undefined) {
      this.lastSuccessMs = now;
      return;
    }
    this.failures.push({ startedMs, endedMs: now, error });
    if (this.failures.length > RING * 4) this.failures.splice(0, this.failures.length - RING);
  }

  /** Stops the ticker and fills in the stalls around each opening (`server`: the servers' stalls, epoch ms). */
  finish(server: { at: number; ms: number }[]): OpeningRecord[] {
    clearInterval(this.ticker);
    const origin = performance.timeOrigin + this.start;
    const serverStalls = server.map((s) => ({ atMs: s.at - origin, ms: s.ms }));
    const around = (list: Stall[], at: number) =>
      list.filter((s) => s.atMs >= at - BEFORE_MS && s.atMs - s.ms <= at + AFTER_MS);
    for (const o of this.openings) {
      o.clientStalls = around(this.stalls, o.atMs);
      o.serverStalls = around(serverStalls, o.atMs);
    }
    return this.openings;
  }

  private lastCounted(): Counted[] {
    const n = Math.min(KEEP, this.countedSeen);
    const out: Counted[] = [];
    for (let i = n; i >= 1; i--) {
      out.push({ ...(this.counted[(this.countedNext - i + RING) % RING] as Counted) });
    }
    return out;
  }
}

const s = (ms: number) => `${fmt(ms / 1000, 3)} s`;
const stallList = (list: Stall[]) =>
  list.length === 0 ? 'none ≥ 50 ms' : list.map((x) => `${s(x.atMs)} (${x.ms} ms)`).join(', ');

/** Counted outcomes of the same millisecond and kind as one entry: a burst shows as one moment. */
function grouped(counted: Counted[]): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < counted.length) {
    const first = counted[i] as Counted;
    let j = i;
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    while (j < counted.length) {
      const c = counted[j] as Counted;
      if (Math.round(c.atMs) !== Math.round(first.atMs) || c.outcome !== first.outcome) break;
      if (c.state !== first.state) break;
      if (c.durationMs !== undefined) {
        min = Math.min(min, c.durationMs);
        max = Math.max(max, c.durationMs);
      }
      j++;
    }
    const n = j - i;
    const durations =
      min > max ? '' : min === max ? ` (${fmt(min, 0)} ms)` : ` (${fmt(min, 0)}–${fmt(max, 0)} ms)`;
    const state = first.state === 'closed' ? '' : ` [${first.state}]`;
    out.push(`${s(first.atMs)}${n > 1 ? ` ×${n}` : ''} ${first.outcome}${durations}${state}`);
    i = j;
  }
  return out;
}

/** An opening as a few lines of text (console and the suite's notes). */
export function describeOpening(stack: string, o: OpeningRecord): string {
  const success =
    o.lastSuccessMs < 0
      ? 'no success yet'
      : `last success ${s(o.lastSuccessMs)} (${fmt(o.atMs - o.lastSuccessMs, 0)} ms before)`;
  return [
    `${stack}: ${o.circuit} opened at ${s(o.atMs)} by the ${o.rule}; ${success}; ${o.inFlight} calls in flight.`,
    `  counted before (time ×count outcome (durations) [state]): ${grouped(o.counted).join('; ')}`,
    `  last failed calls (started → ended, error): ${o.failures
      .map((f) => `${s(f.startedMs)} → ${s(f.endedMs)} ${f.error}`)
      .join('; ')}`,
    `  client loop stalls (ended at, length) from 3 s before to 1 s after: ${stallList(o.clientStalls)}`,
    `  servers' loop stalls, same span: ${stallList(o.serverStalls)}`,
  ].join('\n');
}
