import { LatencySample } from '../routing/latency-sample.js';

/**
 * An attempt left without an explicit `attemptTimeoutMs`, with a retry or
 * failover able to follow it, gets at most this share of what is left of the
 * call's deadline: a hung attempt leaves the other half for the retry.
 */
export const DERIVED_DEADLINE_SHARE = 0.5;
/** ...and at most this many times the p99 of the scope's recent successful attempts... */
export const DERIVED_LATENCY_FACTOR = 3;
/** ...but never less than this, in ms: jitter and a GC pause are not a hung upstream. */
export const DERIVED_FLOOR_MS = 100;
/** Successful attempts older than this (ms) no longer shape the derived timeout. */
const LATENCY_WINDOW_MS = 10_000;
/** Successes a scope needs in the window before its p99 is trusted. */
const LATENCY_MIN_SAMPLES = 20;
const LATENCY_SIZE = 256;

/**
 * The deadline of each attempt of a stack (`attemptTimeoutMs`). Given
 * explicitly, it means exactly that: every attempt gets it, cut to what is
 * left of the call's deadline. Left out, it is derived per attempt so that a
 * hung attempt (a black-holed replica: it accepts and never answers) is cut
 * and retried within the call's deadline: when the call has a deadline and a
 * retry or failover may follow the attempt, the attempt gets the least of
 * the standard attempt timeout (if any), {@link DERIVED_DEADLINE_SHARE} of
 * what is left, and {@link DERIVED_LATENCY_FACTOR} × the p99 of the scope's
 * successful attempts of the last 10 s (once there are 20; never below
 * {@link DERIVED_FLOOR_MS}). An attempt no retry can follow (the last one
 * allowed, a probe, a call not safe to repeat) gets the whole time left.
 * A scope is what shares a latency: a method, a provider, a runner.
 * @internal
 */
export class AttemptTimeout {
  private readonly samples = new Map<string, LatencySample>();

  constructor(
    /** The explicit or standard timeout of each attempt in ms; `Infinity` for none. */
    readonly ms: number,
    /** `attemptTimeoutMs` was left out: attempts are cut by the derived rule too. */
    readonly derived: boolean,
  ) {}

  /**
   * The timeout in ms of an attempt of `scope` starting at `now`, with
   * `leftMs` of the call's deadline left (`Infinity` for none); `Infinity`
   * for none. `retryMayFollow`: a retry or failover could follow a timeout.
   */
  forAttempt(scope: string, leftMs: number, retryMayFollow: boolean, now: number): number {
    const whole = Math.min(this.ms, leftMs);
    if (!this.derived || !retryMayFollow || leftMs === Number.POSITIVE_INFINITY) return whole;
    let ms = Math.min(whole, leftMs * DERIVED_DEADLINE_SHARE);
    const p99 = this.samples.get(scope)?.value(now);
    if (p99 !== undefined)
      ms = Math.min(ms, Math.max(DERIVED_FLOOR_MS, DERIVED_LATENCY_FACTOR * p99));
    return Math.max(ms, 1);
  }

  /** A successful attempt of `scope` took `ms`, ending at `now`. Only a derived timeout listens. */
  observe(scope: string, ms: number, now: number): void {
    if (!this.derived) return;
    let sample = this.samples.get(scope);
    if (sample === undefined) {
      sample = new LatencySample(99, LATENCY_WINDOW_MS, LATENCY_SIZE, 16, LATENCY_MIN_SAMPLES);
      this.samples.set(scope, sample);
    }
    sample.record(ms, now);
  }
}
