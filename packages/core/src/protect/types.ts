import type { CircuitBreaker, CircuitStateChange } from '../breaker/types.js';
import type { Duration } from '../internal/duration.js';
import type { Event } from '../internal/events.js';
import type { KnownKeys } from '../internal/validate.js';
import type { AdaptiveThrottle } from '../limit/adaptive-throttle.js';
import type { ErrorPolicy } from '../retry/verdict.js';
import type { Clock } from '../time/clock.js';
import type { RandomSource } from '../time/random.js';
import type { Sleep } from '../time/sleep.js';

/** Delay between attempts of a {@link protect} runner. */
export interface ProtectBackoff {
  /** `'exponential'` starts at `delay` and doubles each retry; `'fixed'` always waits `delay`. */
  type: 'exponential' | 'fixed';
  /** The first (or every) delay, in ms or as a duration string. Required. */
  delay: Duration;
  /** Randomly reduces each delay to `delay × (1 − jitter × random())`; in `[0, 1]`. Defaults to 0. */
  jitter?: number;
  /** Upper bound on one delay (before jitter), in ms or as a duration string. Defaults to no cap. */
  maxDelay?: Duration;
}

/** Keys of {@link ProtectBackoff}. @internal */
export const PROTECT_BACKOFF_KEYS = {
  type: true,
  delay: true,
  jitter: true,
  maxDelay: true,
} as const satisfies KnownKeys<ProtectBackoff>;

/** The circuit of a {@link protect} runner, counted once per call after its retries. */
export interface ProtectCircuit {
  /** Consecutive counted call failures that open the circuit; an integer > 0. Required. */
  threshold: number;
  /** How long the circuit stays open before one probe call may run, in ms or as a duration string. Required. */
  cooldown: Duration;
}

/** Keys of {@link ProtectCircuit}. @internal */
export const PROTECT_CIRCUIT_KEYS = {
  threshold: true,
  cooldown: true,
} as const satisfies KnownKeys<ProtectCircuit>;

/** Retry budget shared between callers (see `createRetryBudget`). */
export interface ProtectRetryBudget {
  /** Records one call (a deposit). */
  recordRequest(): void;
  /** Withdraws one retry; `false` refuses it. */
  tryRetry(): boolean;
}

/** Options of {@link protect}. */
export interface ProtectOptions {
  /** Attempts per call, the first included; an integer >= 1. Defaults to 1 (no retries). */
  attempts?: number;
  /** Delay between attempts. Defaults to none (retry at once). */
  backoff?: ProtectBackoff;
  /** Per-attempt timeout (queue wait and backoff excluded), in ms or as a duration string. Defaults to none. */
  timeout?: Duration;
  /**
   * `'immediate'` ends a timed-out attempt at once (the caller gets `DeadlineExceededError` at the deadline);
   * `'wait'` waits for the callback to settle first. Either way an attempt keeps the call's concurrency slot
   * until its callback settles — a retry starts after it, and the slot is freed after it — so operations
   * still running at the backend never exceed `concurrency`. Defaults to `'immediate'`.
   */
  timeoutMode?: 'immediate' | 'wait';
  /** Calls running at once (one slot covers a call's retries and backoff); an integer >= 1 or `Infinity`. Defaults to `Infinity`. */
  concurrency?: number;
  /** Calls waiting for a slot (0 = none, `Infinity` = unbounded). Defaults to 0. */
  maxQueue?: number;
  /** Circuit breaker settings, or `false` to disable. Defaults to no circuit. */
  circuit?: ProtectCircuit | false;
  /** Judges each failed attempt (timeouts included). Defaults to retrying and counting every error. */
  classify?: ErrorPolicy;
  /** Retry budget consulted before each retry. Defaults to none (retries limited by `attempts` only). */
  budget?: ProtectRetryBudget;
  /**
   * Client-side adaptive throttle (see `createAdaptiveThrottle`), consulted before
   * each attempt; successes and errors whose verdict has `countForCircuit: false`
   * count as backend accepts. Defaults to none.
   */
  throttle?: AdaptiveThrottle;
  /** Name carried by the circuit's events and errors. Defaults to none. */
  name?: string;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
  /** Waits for backoff and timeouts; a test passes a manual clock's `sleep`. Defaults to the host timer. */
  sleep?: Sleep;
  /** Randomness for backoff jitter. Defaults to `systemRandom`. */
  random?: RandomSource;
}

/** Keys of {@link ProtectOptions}. @internal */
export const PROTECT_KEYS = {
  attempts: true,
  backoff: true,
  timeout: true,
  timeoutMode: true,
  concurrency: true,
  maxQueue: true,
  circuit: true,
  classify: true,
  budget: true,
  throttle: true,
  name: true,
  clock: true,
  sleep: true,
  random: true,
} as const satisfies KnownKeys<ProtectOptions>;

/** What the protected callback receives. */
export interface ProtectContext {
  /** Aborts with `DeadlineExceededError` when the attempt times out, or with the caller's reason when the caller aborts. */
  readonly signal: AbortSignal;
  /** The attempt number, starting at 1. */
  readonly attempt: number;
}

/** The operation run by {@link ProtectRunner}. */
export type ProtectedFunction<T> = (context: ProtectContext) => T | PromiseLike<T>;

/** Replaces the call's error: runs once after the final error, or at once when the call is refused (queue full, circuit open, throttled). */
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
}

/** Emitted before each retry's backoff. */
export interface ProtectRetryEvent {
  /** The attempt that is about to start (2 for the first retry). */
  attempt: number;
  /** The backoff before it, in ms. */
  delayMs: number;
  /** `name` of the error that failed the previous attempt. */
  errorName: string;
}

/** Why a call was refused without running. */
export type ProtectRejectReason = 'queue-full' | 'circuit-open' | 'throttled';

/** Emitted when a call is refused without running. */
export interface ProtectRejectEvent {
  /** What refused the call: the full queue, the open circuit, or the adaptive throttle on the first attempt. */
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
  /** The runner's per-attempt timeout that passed, in ms. */
  timeoutMs: number;
}

/** A runner created by {@link protect}: call it (or its `run`) with the operation. */
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
  /** Retries about to happen. */
  readonly onRetry: Event<ProtectRetryEvent>;
  /** Circuit transitions (never fires without a circuit). */
  readonly onStateChange: Event<CircuitStateChange>;
  /** Calls refused without running (queue full, circuit open, or throttled on the first attempt). */
  readonly onReject: Event<ProtectRejectEvent>;
  /** Fallbacks run. */
  readonly onFallback: Event<ProtectFallbackEvent>;
  /** Attempts that timed out. */
  readonly onTimeout: Event<ProtectTimeoutEvent>;
}
