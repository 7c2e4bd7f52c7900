import type { ResilienceOptions, RetryEvent } from '../attempts/resilience-options.js';
import type { CircuitBreaker, CircuitStateChange } from '../breaker/types.js';
import type { Subscribe } from '../internal/events.js';
import { keysOf } from '../internal/validate.js';
import type { AdaptiveThrottle } from '../limit/adaptive-throttle.js';
import type { Criticality } from '../limit/criticality.js';
import type { ErrorPolicy } from '../retry/verdict.js';

/**
 * Options of `protect`: the one `ResilienceOptions` object (every
 * duration in ms; each part off unless given), without `hedge` — hedging races
 * other providers, which is the router's job — plus protect's own keys.
 */
export interface ProtectOptions extends Omit<ResilienceOptions, 'hedge'> {
  /**
   * `'immediate'` ends a timed-out attempt at once (the caller gets `DeadlineExceededError` at the deadline);
   * `'wait'` waits for the callback to settle first. Either way an attempt keeps the call's concurrency slot
   * until its callback settles — a retry starts after it, and the slot is freed after it — so operations
   * still running at the backend never exceed `concurrency.limit`. Defaults to `'immediate'`.
   */
  timeoutMode?: 'immediate' | 'wait';
  /** Judges each failed attempt (timeouts included). Defaults to retrying and counting every error. */
  classify?: ErrorPolicy;
  /**
   * Client-side adaptive throttle (see `createAdaptiveThrottle`), consulted before
   * each attempt; successes and errors whose verdict has `countForCircuit: false`
   * count as backend accepts. Defaults to none.
   */
  throttle?: AdaptiveThrottle;
  /** Name carried by the circuit's events and errors (when `circuit` is given as options). Defaults to none. */
  name?: string;
}

/** Keys of {@link ProtectOptions}. @internal */
export const PROTECT_KEYS = keysOf<ProtectOptions>()([
  'timeoutMs',
  'attemptTimeoutMs',
  'retry',
  'budget',
  'circuit',
  'concurrency',
  'rateLimit',
  'timeoutMode',
  'classify',
  'throttle',
  'name',
  'clock',
  'sleep',
  'random',
  'telemetry',
  'onEvent',
  'propagate',
]);

/** What the protected callback receives. */
export interface ProtectContext {
  /** Aborts with `DeadlineExceededError` when the attempt times out, or with the caller's reason when the caller aborts. */
  readonly signal: AbortSignal;
  /** The attempt number, starting at 1. */
  readonly attempt: number;
}

/** The operation run by {@link ProtectRunner}. */
export type ProtectedFunction<T> = (context: ProtectContext) => T | PromiseLike<T>;

/** Replaces the call's error: runs once after the final error, or at once when the call is refused (queue full, circuit open, rate limited, throttled). */
export type ProtectFallback<T> = (
  error: unknown,
  context: {
    /** The caller's `signal`, or a never-aborted signal when the call has none. */
    readonly signal: AbortSignal;
  },
) => T | PromiseLike<T>;

/** Per-call options of {@link ProtectRunner}. */
export interface ProtectRunOptions<T> {
  /** Cancels the call: it leaves the queue, stops retrying and rejects with the signal's reason. Defaults to none. */
  signal?: AbortSignal | undefined;
  /** Produces the call's result when it fails (not on external abort or a throwing policy). Defaults to none. */
  fallback?: ProtectFallback<T> | undefined;
  /** Replaces the runner's classifier for this call. Defaults to the runner's. */
  classify?: ErrorPolicy | undefined;
  /** How much the call matters under `concurrency.adaptive`: the lowest tier is refused first. Defaults to `'default'`. */
  criticality?: Criticality | undefined;
  /** `false`: this call inherits nothing from the inbound call it runs under (see `propagate`). Defaults to inheriting. */
  propagate?: false | undefined;
}

/** Emitted before each retry's wait: the same event as `retry.onRetry`'s. */
export type ProtectRetryEvent = RetryEvent;

/** Why a call was refused without running. */
export type ProtectRejectReason =
  | 'queue-full'
  | 'concurrency-limit'
  | 'circuit-open'
  | 'rate-limited'
  | 'throttled';

/** Emitted when a call is refused without running. */
export interface ProtectRejectEvent {
  /** What refused the call: the full queue, the adaptive concurrency limit, the open circuit, the rate limit, or the adaptive throttle on the first attempt. */
  reason: ProtectRejectReason;
}

/** Emitted when a call's fallback runs. */
export interface ProtectFallbackEvent {
  /** `'error'` after the final error, else the rejection that triggered it. */
  reason: 'error' | ProtectRejectReason;
}

/** Emitted when an attempt times out. */
export interface ProtectTimeoutEvent {
  /** The attempt that timed out, starting at 1. */
  attempt: number;
  /** The deadline that passed, in ms: `attemptTimeoutMs`, or `timeoutMs` when the call's deadline came first. */
  timeoutMs: number;
}

/** A runner created by `protect`: call it (or its `run`) with the operation. */
export interface ProtectRunner {
  /** Runs `fn` under the runner's policies. A non-function `fn` or an invalid per-call option throws `TypeError` synchronously, before the call takes anything. */
  <T>(fn: ProtectedFunction<T>, options?: ProtectRunOptions<T>): Promise<T>;
  /** Same as calling the runner. */
  run<T>(fn: ProtectedFunction<T>, options?: ProtectRunOptions<T>): Promise<T>;
  /** The runner's circuit (the shared breaker), or `undefined` without one. */
  readonly circuit: CircuitBreaker | undefined;
  /** Calls holding a slot now, counting timed-out attempts whose callback has not settled yet. */
  readonly active: number;
  /** Calls waiting for a slot now. */
  readonly queued: number;
  /** Retries about to happen; `attempt` is the attempt that failed. */
  readonly onRetry: Subscribe<ProtectRetryEvent>;
  /** Circuit transitions (never fires without a circuit). */
  readonly onStateChange: Subscribe<CircuitStateChange>;
  /** Calls refused without running (queue full, circuit open, rate limited, or throttled on the first attempt). */
  readonly onReject: Subscribe<ProtectRejectEvent>;
  /** Fallbacks run. */
  readonly onFallback: Subscribe<ProtectFallbackEvent>;
  /** Attempts that timed out. */
  readonly onTimeout: Subscribe<ProtectTimeoutEvent>;
}
