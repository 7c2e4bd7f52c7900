import type { Subscribe } from '../internal/events.js';
import { keysOf } from '../internal/validate.js';
import type { Clock } from '../time/clock.js';

/** The three states of the one circuit-breaker state machine. */
export type CircuitState = 'closed' | 'open' | 'half-open';

/** A sliding window that judges the failure rate (in addition to the consecutive count). */
export type FailureRateWindow =
  | {
      /** Judges the last `size` calls. */
      type: 'count';
      /** Number of most recent calls the window holds; an integer > 0. */
      size: number;
      /** Calls needed in the window before the rate is judged. Defaults to `size`. */
      minimumCalls?: number;
      /** Failure (and slow-call) rate in `(0, 1]` that opens the circuit. */
      failureRateThreshold: number;
    }
  | {
      /** Judges the calls of the last `sizeMs` milliseconds. */
      type: 'time';
      /** Span of the window in ms (> 0); calls expire a tenth of it at a time. */
      sizeMs: number;
      /** Calls needed in the window before the rate is judged. Defaults to 1. */
      minimumCalls?: number;
      /** Failure (and slow-call) rate in `(0, 1]` that opens the circuit. */
      failureRateThreshold: number;
    };

/** Keys of a `'count'` {@link FailureRateWindow}. @internal */
export const COUNT_WINDOW_KEYS = keysOf<Extract<FailureRateWindow, { type: 'count' }>>()([
  'type',
  'size',
  'minimumCalls',
  'failureRateThreshold',
]);

/** Keys of a `'time'` {@link FailureRateWindow}. @internal */
export const TIME_WINDOW_KEYS = keysOf<Extract<FailureRateWindow, { type: 'time' }>>()([
  'type',
  'sizeMs',
  'minimumCalls',
  'failureRateThreshold',
]);

/** Slow successes count toward the failure rate. */
export interface SlowCallRule {
  /** A success that took at least this many ms is slow. */
  durationMs: number;
  /** Slow-call rate in `(0, 1]` that opens the circuit (needs a window). */
  rateThreshold: number;
}

/** Keys of {@link SlowCallRule}. @internal */
export const SLOW_CALL_KEYS = keysOf<SlowCallRule>()(['durationMs', 'rateThreshold']);

/** Settings of the circuit-breaker state machine (SPEC §2). */
export interface CircuitBreakerConfig {
  /**
   * Consecutive counted failures that open the circuit (and span
   * `failureSpanMs`). Integer > 0; `Infinity` leaves only the window. Defaults to 5.
   */
  failureThreshold: number;
  /**
   * The consecutive failures must also span at least this many ms, first to
   * last, to open the circuit (>= 0). Failures that land together — deadline
   * timers fired in one event-loop turn after a stall, a batch delivering its
   * errors first, the in-flight calls of one dropped connection — say how
   * calls were ordered, not that the upstream is down; an outage keeps failing
   * for longer than this. With a span, the failures must also fall at
   * `failureThreshold` distinct moments, each at least `failureSpanMs /
   * failureThreshold` ms after the previous one counted, so one failure before
   * an event-loop stall and the burst right after it do not span the stall;
   * and when the failure's duration is known (`release`'s `durationMs`), a
   * moment counts only for a call sent at or after the previous moment, so a
   * burst a starved process takes hundreds of ms to work through stays one.
   * `0` makes the count alone open the circuit. Defaults to 500 when
   * `failureThreshold` is left out too, else to 0: a threshold you set is a
   * plain count (`failureThreshold: 1` opens on the first failure) unless you
   * also set a span.
   */
  failureSpanMs: number;
  /** How long the circuit stays open before a probe, in ms. Defaults to 200. */
  openDurationMs: number;
  /** Each failed probe multiplies the open duration by this (>= 1). Defaults to 1. */
  backoffMultiplier: number;
  /**
   * Cap on the open duration, in ms (>= `openDurationMs`). Defaults to 10 × `openDurationMs`
   * (2 s with the default 200 ms). `Infinity` removes the cap; the duration then
   * saturates at `Number.MAX_SAFE_INTEGER` ms instead of overflowing to `Infinity`.
   */
  maxOpenDurationMs: number;
  /**
   * Probes admitted while half-open, per open duration (a slot a probe has
   * held for `openDurationMs` is leased to the next call); `Infinity` lets all
   * traffic through. Defaults to 1.
   */
  halfOpenMaxCalls: number;
  /** Successes in half-open that close the circuit. Defaults to 1. */
  successThreshold: number;
  /**
   * Failure-rate window, judged in addition to the consecutive rule; `undefined` in a
   * validated config means none. Defaults to `{ type: 'time', sizeMs: 10_000, minimumCalls: 100,
   * failureRateThreshold: 0.5 }` (half the calls of the last 10 s, once 100 were seen).
   */
  window?: FailureRateWindow;
  /** Optional slow-call rule (counts toward the window's rate; needs a window). Defaults to none (no call is slow). */
  slowCall?: SlowCallRule;
}

/**
 * Breaker settings as given: any {@link CircuitBreakerConfig} field, each
 * defaulting on its own; `window: false` turns the failure-rate window off.
 */
export interface CircuitBreakerSettings extends Partial<Omit<CircuitBreakerConfig, 'window'>> {
  /** A failure-rate window, or `false` for none. Defaults to the standard time window (see `STANDARD_RESILIENCE.circuit.window`). */
  window?: FailureRateWindow | false;
}

/** How a call admitted by the breaker ended. `neutral` neither counts nor resets. */
export type CallOutcome = 'success' | 'failure' | 'neutral';

/** Emitted on every state transition. Carries no request data. */
export interface CircuitStateChange {
  /** Name of the breaker, when it has one. */
  name: string | undefined;
  /** State before the transition. */
  from: CircuitState;
  /** State after the transition. */
  to: CircuitState;
  /** Clock time of the transition. */
  at: number;
  /** Open duration in force after the transition (ms), when it opened. */
  openDurationMs?: number;
}

/** Emitted when the breaker refuses a call. */
export interface CircuitRejection {
  /** Name of the breaker, when it has one. */
  name: string | undefined;
  /** State that refused the call: `open`, or `half-open` with every probe slot taken. */
  state: CircuitState;
  /** Milliseconds until a probe may be admitted; `Infinity` while isolated. */
  retryAfterMs: number;
}

/** What a call admitted by `tryAcquire` tells the breaker when it ends. */
export interface CallReport {
  readonly outcome: CallOutcome;
  /**
   * How long the call took, in ms, when the caller timed it: feeds the
   * slow-call rule, and tells a call sent before the latest failure from one
   * sent since (`failureSpanMs`). Defaults to unknown (never slow).
   */
  readonly durationMs?: number | undefined;
}

/**
 * The stateful breaker every Breakwater piece shares (standalone, `protect`,
 * router, health registry, adapters).
 *
 * Low-level composition contract: `tryAcquire()` admits one call and returns a
 * non-negative permit number (it encodes the admitting generation and whether
 * the call is a half-open probe), or `-1` when refused; the caller must later
 * hand the permit to `release(permit, { outcome })` exactly once; `isProbePermit(permit)`
 * says whether it admitted a half-open probe, which a driver must not retry or
 * hedge on this circuit. Outcomes from an
 * older generation do not move the current state; a neutral probe frees its
 * probe slot. This allocates nothing per call.
 */
export interface CircuitBreaker {
  /** Current state (open → half-open is evaluated lazily on read). */
  readonly state: CircuitState;
  /**
   * Runs `fn` if admitted and records its outcome; rejects with
   * `CircuitOpenError` without calling `fn` when refused. A rejection caused by
   * `options.signal` aborting is neutral.
   */
  execute<T>(
    fn: (signal: AbortSignal) => Promise<T> | T,
    options?: {
      /** Passed to `fn`; if already aborted, `fn` is not called, and an error after it aborts counts as neutral. Defaults to none. */
      signal?: AbortSignal;
    },
  ): Promise<T>;
  /** Admission check that consumes a half-open probe slot when it admits. */
  canExecute(): boolean;
  /** Records a success into the current generation (pairs with `canExecute`). */
  onSuccess(durationMs?: number): void;
  /** Records a failure into the current generation (pairs with `canExecute`). */
  onFailure(durationMs?: number): void;
  /** Admits one call: a permit `>= 0`, or `-1` when refused. */
  tryAcquire(): number;
  /**
   * Reports the outcome of a call admitted by `tryAcquire`, once per permit;
   * a refused permit (`-1`) is ignored. See {@link CallReport}.
   */
  release(permit: number, report: CallReport): void;
  /** Milliseconds until a probe may be admitted (0 when closed or admitting). */
  retryAfterMs(): number;
  /**
   * Opens the circuit now for `openDurationMs` (default: the duration in force),
   * then half-open as usual: honours a trip decided elsewhere, such as another
   * process sharing the circuit. An open period that ends later is kept; an
   * isolated circuit stays isolated. Throws `RangeError` for a negative or
   * non-finite duration.
   */
  trip(openDurationMs?: number): void;
  /**
   * Moves an open circuit to half-open now, so the next call is its probe,
   * instead of waiting out the open duration: for a health signal (a passing
   * health check, a connection back to READY) saying the upstream answers
   * again. A closed, half-open or isolated circuit is left alone.
   */
  halfOpen(): void;
  /** Forces the circuit open until `reset()`. */
  isolate(): void;
  /** Forces the circuit closed and clears its counters. */
  reset(): void;
  /** A JSON-safe snapshot that `initialState` accepts. */
  toJSON(): CircuitBreakerSnapshot;
  /** Subscribes to state transitions. */
  readonly onStateChange: Subscribe<CircuitStateChange>;
  /** Subscribes to refusals. */
  readonly onReject: Subscribe<CircuitRejection>;
}

/** Serialisable breaker state, for `toJSON()` / `initialState`. */
export interface CircuitBreakerSnapshot {
  /** Circuit state when the snapshot was taken. */
  state: CircuitState;
  /** Counted failures in a row; an integer >= 0. */
  consecutiveFailures: number;
  /** Clock time (ms) the circuit last opened; 0 if it never opened. */
  openedAt: number;
  /** Cool-down in force in ms, including growth from failed probes. */
  openDurationMs: number;
  /** True when forced open by `isolate()`; needs `state: 'open'`. */
  isolated: boolean;
}

/** Options of `createCircuitBreaker`: any config field plus clock, name and restored state. */
export interface CircuitBreakerOptions extends CircuitBreakerSettings {
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
  /** Name carried in events and errors. Defaults to none. */
  name?: string;
  /** State restored from an earlier `toJSON()`. Defaults to a fresh closed circuit. */
  initialState?: CircuitBreakerSnapshot;
  /**
   * Decides whether an error thrown inside `execute` counts as a failure;
   * `false` (or a throwing classifier) makes it neutral. Defaults to counting every error.
   */
  isFailure?: (error: unknown) => boolean;
}

/** Keys of {@link CircuitBreakerOptions}. @internal */
export const CIRCUIT_BREAKER_KEYS = keysOf<CircuitBreakerOptions>()([
  'failureThreshold',
  'failureSpanMs',
  'openDurationMs',
  'backoffMultiplier',
  'maxOpenDurationMs',
  'halfOpenMaxCalls',
  'successThreshold',
  'window',
  'slowCall',
  'clock',
  'name',
  'initialState',
  'isFailure',
]);
