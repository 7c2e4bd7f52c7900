import { LatencySample } from '../routing/latency-sample.js';
import type { RetryBudgetLike } from './engine.js';

/** A derived attempt timeout is this many times the p99 of the scope's recent successful attempts... */
export const DERIVED_LATENCY_FACTOR = 3;
/** ...but never less than this, in ms: jitter and a GC pause are not a hung upstream. */
export const DERIVED_FLOOR_MS = 100;
/** Successful attempts older than this (ms) no longer shape the derived timeout. */
const LATENCY_WINDOW_MS = 10_000;
/** Successes a scope needs in the window before its p99 is trusted. */
const LATENCY_MIN_SAMPLES = 20;
const LATENCY_SIZE = 256;

function newSample(): LatencySample {
  return new LatencySample(99, LATENCY_WINDOW_MS, LATENCY_SIZE, 16, LATENCY_MIN_SAMPLES);
}

/**
 * The recent latency of successful attempts, per scope and over every scope
 * together: what a stack (or a router's providers) knows of normal latency.
 * @internal
 */
export class ScopeLatencies {
  private readonly byScope = new Map<string, LatencySample>();
  private readonly all = newSample();

  /** A successful attempt of `scope` took `ms`, ending at `now`. */
  record(scope: string, ms: number, now: number): void {
    let sample = this.byScope.get(scope);
    if (sample === undefined) {
      sample = newSample();
      this.byScope.set(scope, sample);
    }
    sample.record(ms, now);
    this.all.record(ms, now);
  }

  /**
   * The p99 of `scope`'s recent successes; without enough of them, the p99
   * over every scope (a scope that stopped answering is judged by its
   * siblings); `undefined` while nothing is known.
   */
  p99(scope: string, now: number): number | undefined {
    return this.byScope.get(scope)?.value(now) ?? this.all.value(now);
  }
}

/**
 * The deadline of each attempt of a stack (`attemptTimeoutMs`). Given
 * explicitly, it means exactly that: every attempt gets it, cut to what is
 * left of the call's deadline. Left out, it is derived per attempt so that a
 * hung attempt (a black-holed replica: it accepts and never answers) is cut
 * and retried within the call's deadline — but only on evidence of what is
 * normal: when the call has a deadline and a retry or failover may follow
 * the attempt, the attempt gets the least of the whole time left, the
 * standard attempt timeout (if any) and {@link DERIVED_LATENCY_FACTOR} × the
 * p99 of the scope's successful attempts of the last 10 s (once there are
 * 20; else the p99 over every scope of the stack; never below
 * {@link DERIVED_FLOOR_MS}). With no latency known the attempt is not cut:
 * a slow but healthy upstream answers as it would to a plain client. An
 * attempt no retry can follow (the last one allowed, a probe, a call not
 * safe to repeat) gets the whole time left, and so does every attempt while
 * the retry budget would refuse the retry a cut needs. A scope is what shares a
 * latency: a method, a provider, a runner.
 * @internal
 */
export class AttemptTimeout {
  constructor(
    /** The explicit or standard timeout of each attempt in ms; `Infinity` for none. */
    readonly ms: number,
    /** `attemptTimeoutMs` was left out: attempts are cut by the derived rule too. */
    readonly derived: boolean,
    /** What is known of normal latency (a router's providers share one). */
    private readonly latencies = new ScopeLatencies(),
    /** The budget a retry after a cut draws on: while it would refuse one, nothing is cut. */
    private readonly budget?: RetryBudgetLike | undefined,
  ) {}

  /** Whether an attempt may get a deadline of its own (else only the call's applies). */
  get mayCut(): boolean {
    return this.derived || this.ms !== Number.POSITIVE_INFINITY;
  }

  /** The same timeout, learning from (and judging by) `latencies`. */
  sharing(latencies: ScopeLatencies): AttemptTimeout {
    return new AttemptTimeout(this.ms, this.derived, latencies, this.budget);
  }

  /**
   * The timeout in ms of an attempt of `scope` starting at `now`, with
   * `leftMs` of the call's deadline left (`Infinity` for none); `Infinity`
   * for none. `retryMayFollow`: a retry or failover could follow a timeout.
   */
  forAttempt(scope: string, leftMs: number, retryMayFollow: boolean, now: number): number {
    const whole = Math.min(this.ms, leftMs);
    if (!this.derived || !retryMayFollow || leftMs === Number.POSITIVE_INFINITY) return whole;
    // A cut whose retry the budget would refuse only ends the call early: when every call of a
    // burst is slow at once (a client flooding its own event loop), a cut is no rescue.
    if (this.budget?.canRetry?.() === false) return whole;
    const p99 = this.latencies.p99(scope, now);
    if (p99 === undefined) return whole;
    return Math.max(Math.min(whole, Math.max(DERIVED_FLOOR_MS, DERIVED_LATENCY_FACTOR * p99)), 1);
  }

  /**
   * Whether an attempt of `scope` that has run `ms` by `now` ran past its
   * normal latency: longer than the derived cut (3 × the p99, at least
   * 100 ms), judged only on evidence (never while no latency is known).
   */
  ranPastNormal(scope: string, ms: number, now: number): boolean {
    if (!this.derived) return false;
    const p99 = this.latencies.p99(scope, now);
    return p99 !== undefined && ms > Math.max(DERIVED_FLOOR_MS, DERIVED_LATENCY_FACTOR * p99);
  }

  /** A successful attempt of `scope` took `ms`, ending at `now`. Only a derived timeout listens. */
  observe(scope: string, ms: number, now: number): void {
    if (this.derived) this.latencies.record(scope, ms, now);
  }
}
