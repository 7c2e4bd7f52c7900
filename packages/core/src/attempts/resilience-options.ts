import { createCircuitBreaker } from '../breaker/circuit-breaker.js';
import { DEFAULT_CIRCUIT_BREAKER_OPTIONS } from '../breaker/config.js';
import type { CircuitBreaker, CircuitBreakerOptions } from '../breaker/types.js';
import {
  checkFunction,
  checkNumber,
  checkObject,
  checkOptions,
  keysOf,
  optionalNumber,
  optionPath,
} from '../internal/validate.js';
import {
  type AdaptiveConcurrencyOptions,
  type GradientSettings,
  resolveAdaptiveOf,
} from '../limit/gradient-limit.js';
import {
  createTokenBucket,
  type TokenBucket,
  type TokenBucketOptions,
} from '../limit/token-bucket.js';
import {
  type PropagateOptions,
  type PropagatePlan,
  resolvePropagate,
} from '../propagation/propagate-options.js';
import { type Backoff, type BackoffOptions, createBackoff } from '../retry/backoff.js';
import { createRetryBudget, type RetryBudget, type RetryBudgetOptions } from '../retry/budget.js';
import { type Clock, monotonicClock } from '../time/clock.js';
import type { RandomSource } from '../time/random.js';
import type { Sleep } from '../time/sleep.js';
import { AttemptTimeout } from './attempt-timeout.js';
import {
  AttemptEngine,
  DEFAULT_ATTEMPTS,
  DEFAULT_BACKOFF,
  DEFAULT_BACKOFF_OPTIONS,
  DEFAULT_MAX_PUSHBACK_MS,
  MAX_ATTEMPTS,
} from './engine.js';
import { bothTelemetries, eventTelemetry, type ResilienceListener } from './resilience-events.js';
import { guardTelemetry, type SafeTelemetry, type Telemetry } from './telemetry.js';

/** What `retry.onRetry` hears before each retry's wait. */
export interface RetryEvent {
  /** The attempt that failed (1 = the first call). */
  attempt: number;
  /** The wait before the next attempt, in ms. */
  delayMs: number;
  /** `name` of the error the attempt failed with (never its message or payload). */
  errorName: string;
}

/** Retries: `retry` of {@link ResilienceOptions}. */
export interface RetryPolicyOptions {
  /** Attempts per call, the first included; an integer in `[1, 10]`. Defaults to 3. */
  attempts?: number;
  /** Delay between attempts: a `Backoff` or `createBackoff` options. Defaults to exponential from 100 ms, ×2, capped at 5 s, full jitter. */
  backoff?: Backoff | BackoffOptions;
  /** Longest server pushback honoured, in ms; a longer one ends the retries. Defaults to 30 000. */
  maxPushbackMs?: number;
  /** Told before each retry's wait; a throwing listener is ignored. Defaults to none. */
  onRetry?: (event: RetryEvent) => void;
}

/** Hedging: `hedge` of {@link ResilienceOptions}. */
export interface HedgePolicyOptions {
  /** Start another attempt when the latest has been outstanding this long, in ms (>= 0). Required. */
  delayMs: number;
  /** Attempts per call, the first included; an integer in `[2, 10]`. Defaults to 2. */
  attempts?: number;
}

/** A bulkhead: `concurrency` of {@link ResilienceOptions}. */
export interface ConcurrencyOptions {
  /** Calls running at once (one slot covers a call with all its attempts); an integer >= 1. Required, unless `adaptive`. */
  limit?: number;
  /** Calls waiting for a slot; 0 refuses at once, `Infinity` waits unbounded. Defaults to 0. */
  maxQueue?: number;
  /** Discovers the limit from latency instead, per target, and refuses (never queues) the calls over it, lowest criticality first: `true`, or its parameters. Replaces `limit` and `maxQueue`. Defaults to off. */
  adaptive?: true | AdaptiveConcurrencyOptions | false;
}

/**
 * The one options object of a resilience stack. `protect`, the router's
 * provider protection, `resilienceInterceptor` (grpc-js),
 * `resilienceMiddleware` (nice-grpc) and `resilienceLink` (tRPC) all take it,
 * with the same names meaning the same thing; adapters add only `idempotent`
 * and a framework-typed `classify`. Every duration is a number of ms. Every
 * part is turned off with `false`.
 */
export interface ResilienceOptions {
  /** Deadline of the whole call (every attempt and wait), in ms (> 0). */
  timeoutMs?: number | false;
  /** Deadline of each attempt, in ms (> 0); never later than the call's. */
  attemptTimeoutMs?: number | false;
  /** Retries of failed attempts. */
  retry?: RetryPolicyOptions | false;
  /** Hedging: parallel attempts for slow calls (instead of retries, for the calls it covers). */
  hedge?: HedgePolicyOptions | false;
  /** One retry budget for every retry, hedge and failover: a budget, or `createRetryBudget` options. */
  budget?: RetryBudget | RetryBudgetOptions | false;
  /** The circuit breaker, counted once per call after its retries: a breaker, or `createCircuitBreaker` options. */
  circuit?: CircuitBreaker | CircuitBreakerOptions | false;
  /** A bulkhead: calls at once and calls waiting. */
  concurrency?: ConcurrencyOptions | false;
  /** A rate limit, one token per call: a token bucket, or `createTokenBucket` options. */
  rateLimit?: TokenBucket | TokenBucketOptions | false;
  /** Time source, also of the `telemetry` durations. Defaults to `systemClock` (telemetry: `monotonicClock`, sub-millisecond). */
  clock?: Clock;
  /** Waits for backoff and deadlines (a manual clock's `sleep` in tests). Defaults to the host timer. */
  sleep?: Sleep;
  /** Randomness for jitter. Defaults to `systemRandom`. */
  random?: RandomSource;
  /** Hears every attempt, retry, hedge, failover, refusal and call end (e.g. `otelTelemetry()` of `@breakwater/otel`). Defaults to none: nothing is called or allocated for it. */
  telemetry?: Telemetry;
  /**
   * Hears every circuit state change, retry, hedge, failover and refusal, each with its
   * method and target where known; what it throws is dropped. Defaults to none.
   * @example
   * onEvent: (e) => { if (e.kind === 'circuit') log(`${e.method} ${e.from} → ${e.to}`); }
   */
  onEvent?: ResilienceListener;
  /** Inside a bound server handler, inherit the inbound call's deadline (less `marginMs`), cancellation and attempt; `false` opts out. Defaults to on, `marginMs: 5`. */
  propagate?: PropagateOptions | false;
}

/** Keys of {@link ResilienceOptions}. @internal */
export const RESILIENCE_KEYS = keysOf<ResilienceOptions>()([
  'timeoutMs',
  'attemptTimeoutMs',
  'retry',
  'hedge',
  'budget',
  'circuit',
  'concurrency',
  'rateLimit',
  'clock',
  'sleep',
  'random',
  'telemetry',
  'onEvent',
  'propagate',
]);

const RETRY_POLICY_KEYS = keysOf<RetryPolicyOptions>()([
  'attempts',
  'backoff',
  'maxPushbackMs',
  'onRetry',
]);

const HEDGE_POLICY_KEYS = keysOf<HedgePolicyOptions>()(['delayMs', 'attempts']);

const CONCURRENCY_KEYS = keysOf<ConcurrencyOptions>()(['limit', 'maxQueue', 'adaptive']);

/** The parts of {@link ResilienceOptions} a stack runs with, validated and built once. @internal */
export interface ResiliencePlan {
  /** Deadline of the whole call in ms; `Infinity` for none. */
  readonly timeoutMs: number;
  /** Deadline of each attempt in ms (explicit or standard); `Infinity` for none. */
  readonly attemptTimeoutMs: number;
  /** Each attempt's deadline, derived per attempt when `attemptTimeoutMs` was left out. */
  readonly attemptTimeout: AttemptTimeout;
  /** Engine for retries, or `undefined` when calls get one attempt. */
  readonly retry: AttemptEngine | undefined;
  /** Engine for hedging, or `undefined`. */
  readonly hedge: AttemptEngine | undefined;
  readonly onRetry: ((event: RetryEvent) => void) | undefined;
  readonly budget: RetryBudget | undefined;
  readonly circuit: CircuitBreaker | undefined;
  readonly concurrency: { readonly limit: number; readonly maxQueue: number } | undefined;
  /** `concurrency.adaptive`, validated: each target's limiter is built from it. */
  readonly adaptive: GradientSettings | undefined;
  readonly rateLimit: TokenBucket | undefined;
  /** Inheritance from the inbound call, or `undefined` when `propagate: false`. */
  readonly propagate: PropagatePlan | undefined;
  /** The `telemetry` option and `onEvent`, guarded so that drivers call them without try/catch; `undefined` for neither. */
  readonly telemetry: SafeTelemetry | undefined;
}

/**
 * The standard stack every adapter's `resilience*()` runs with when given no
 * options, part by part (a part given in the options replaces its default;
 * `false` turns it off). The same in all three adapters.
 */
export const STANDARD_RESILIENCE = Object.freeze({
  timeoutMs: 30_000,
  attemptTimeoutMs: 10_000,
  retry: Object.freeze({ attempts: DEFAULT_ATTEMPTS }),
  budget: Object.freeze({ ratio: 0.2, minRetriesPerSecond: 10, ttlMs: 10_000 }),
  // The breaker's own defaults: the standard circuit is the default circuit.
  circuit: DEFAULT_CIRCUIT_BREAKER_OPTIONS,
  concurrency: Object.freeze({ limit: 1_000, maxQueue: 0 }),
}) satisfies ResilienceOptions;

type Part<K extends keyof ResilienceOptions> = ResilienceOptions[K] | undefined;

/** `value` of option `path` when the caller left it out: the standard default, or off. */
function pick<K extends keyof ResilienceOptions>(
  options: ResilienceOptions,
  key: K,
  standard: boolean,
): Part<K> {
  const value = options[key];
  if (value !== undefined) return value;
  return standard ? (STANDARD_RESILIENCE as ResilienceOptions)[key] : undefined;
}

function duration(path: string, value: unknown): number {
  if (value === undefined || value === false) return Number.POSITIVE_INFINITY;
  return checkNumber(path, value, { above: 0, allowInfinity: true });
}

function attemptsOf(path: string, value: unknown, fallback: number, min: number): number {
  return optionalNumber(path, value, fallback, { integer: true, min, max: MAX_ATTEMPTS });
}

function backoffOf(
  path: string,
  value: Backoff | BackoffOptions | undefined,
  random: RandomSource | undefined,
): Backoff {
  if (value === undefined) {
    return random === undefined
      ? DEFAULT_BACKOFF
      : createBackoff({ ...DEFAULT_BACKOFF_OPTIONS, random });
  }
  checkObject(path, value, false);
  if (typeof (value as Backoff).delayFor === 'function') return value as Backoff;
  const options = value as BackoffOptions;
  // The stack's injected randomness drives jitter too, unless the backoff names its own.
  return optionPath(path, () =>
    createBackoff(
      random === undefined || options.random !== undefined ? options : { ...options, random },
    ),
  );
}

function isBreaker(value: object): value is CircuitBreaker {
  const b = value as Partial<CircuitBreaker>;
  return typeof b.tryAcquire === 'function' && typeof b.release === 'function';
}

/**
 * Validates `options` of factory `fn` (found at option path `path`, `''` for
 * the factory's own options) and builds the parts it turns on; errors name
 * the full option path and the nearest valid name of an unknown key. With `standard`, parts left out take
 * {@link STANDARD_RESILIENCE}; without it they are off.
 * @internal
 */
export function resolveResilience(
  fn: string,
  path: string,
  options: ResilienceOptions | undefined,
  standard: boolean,
): ResiliencePlan {
  return optionPath(path, () => resolve(options, standard), fn);
}

function resolve(options: ResilienceOptions | undefined, standard: boolean): ResiliencePlan {
  checkOptions(undefined, options, RESILIENCE_KEYS);
  const o = options ?? {};
  checkFunction(`clock`, o.clock);
  checkFunction(`sleep`, o.sleep);
  checkFunction(`random`, o.random);
  const clock = o.clock;
  const sleep = o.sleep;

  const budgetOption = pick(o, 'budget', standard);
  let budget: RetryBudget | undefined;
  if (budgetOption !== undefined && budgetOption !== false) {
    checkObject(`budget`, budgetOption, false);
    budget =
      typeof (budgetOption as RetryBudget).tryRetry === 'function'
        ? (budgetOption as RetryBudget)
        : optionPath(`budget`, () =>
            createRetryBudget(
              clock === undefined
                ? (budgetOption as RetryBudgetOptions)
                : Object.assign({}, budgetOption as RetryBudgetOptions, { clock }),
            ),
          );
  }

  const retryOption = pick(o, 'retry', standard);
  let retry: AttemptEngine | undefined;
  let onRetry: ((event: RetryEvent) => void) | undefined;
  if (retryOption !== undefined && retryOption !== false) {
    checkOptions(undefined, retryOption, RETRY_POLICY_KEYS, 'retry', false);
    checkFunction(`retry.onRetry`, retryOption.onRetry);
    onRetry = retryOption.onRetry;
    const attempts = attemptsOf(`retry.attempts`, retryOption.attempts, DEFAULT_ATTEMPTS, 1);
    if (attempts > 1) {
      retry = new AttemptEngine({
        attempts,
        backoff: backoffOf(`retry.backoff`, retryOption.backoff, o.random),
        // The default policy's at-once first retry of a turned-away attempt; a given backoff is kept as given.
        retryTurnedAwayAtOnce: retryOption.backoff === undefined,
        budget,
        maxPushbackMs: optionalNumber(
          `retry.maxPushbackMs`,
          retryOption.maxPushbackMs,
          DEFAULT_MAX_PUSHBACK_MS,
          { min: 0 },
        ),
        clock,
        sleep,
      });
    }
  }

  const hedgeOption = o.hedge;
  let hedge: AttemptEngine | undefined;
  if (hedgeOption !== undefined && hedgeOption !== false) {
    checkOptions(undefined, hedgeOption, HEDGE_POLICY_KEYS, 'hedge', false);
    hedge = new AttemptEngine({
      attempts: attemptsOf(`hedge.attempts`, hedgeOption.attempts, 2, 2),
      hedgeDelayMs: checkNumber(`hedge.delayMs`, hedgeOption.delayMs, { min: 0 }),
      budget,
      clock,
      sleep,
    });
  }

  const circuitOption = pick(o, 'circuit', standard);
  let circuit: CircuitBreaker | undefined;
  if (circuitOption !== undefined && circuitOption !== false) {
    checkObject(`circuit`, circuitOption, false);
    circuit = isBreaker(circuitOption)
      ? circuitOption
      : optionPath(`circuit`, () =>
          createCircuitBreaker(
            clock === undefined ? circuitOption : Object.assign({}, circuitOption, { clock }),
          ),
        );
  }

  const concurrencyOption = pick(o, 'concurrency', standard);
  let concurrency: ResiliencePlan['concurrency'];
  let adaptive: GradientSettings | undefined;
  if (concurrencyOption !== undefined && concurrencyOption !== false) {
    checkOptions(undefined, concurrencyOption, CONCURRENCY_KEYS, 'concurrency', false);
    adaptive = resolveAdaptiveOf(concurrencyOption);
  }
  if (concurrencyOption !== undefined && concurrencyOption !== false && adaptive === undefined) {
    concurrency = {
      limit: checkNumber(`concurrency.limit`, concurrencyOption.limit, {
        integer: true,
        min: 1,
      }),
      maxQueue: optionalNumber(`concurrency.maxQueue`, concurrencyOption.maxQueue, 0, {
        integer: true,
        min: 0,
        allowInfinity: true,
      }),
    };
  }

  const rateOption = o.rateLimit;
  let rateLimit: TokenBucket | undefined;
  if (rateOption !== undefined && rateOption !== false) {
    checkObject(`rateLimit`, rateOption, false);
    rateLimit =
      typeof (rateOption as TokenBucket).tryAcquire === 'function'
        ? (rateOption as TokenBucket)
        : optionPath(`rateLimit`, () =>
            createTokenBucket(
              clock === undefined
                ? (rateOption as TokenBucketOptions)
                : Object.assign({}, rateOption as TokenBucketOptions, { clock }),
            ),
          );
  }

  const telemetryOption = o.telemetry;
  if (telemetryOption !== undefined) {
    checkObject(`telemetry`, telemetryOption, false);
    checkFunction(`telemetry.startCall`, (telemetryOption as Partial<Telemetry>).startCall, false);
    checkFunction(`telemetry.circuit`, telemetryOption.circuit);
    checkFunction(`telemetry.providers`, telemetryOption.providers);
  }
  checkFunction(`onEvent`, o.onEvent);
  // Durations need sub-millisecond resolution unless the user injects a clock (a manual one in tests).
  const telemetryClock = clock ?? monotonicClock;
  const telemetry =
    telemetryOption === undefined ? undefined : guardTelemetry(telemetryOption, telemetryClock);
  const events =
    o.onEvent === undefined ? undefined : guardTelemetry(eventTelemetry(o.onEvent), telemetryClock);

  const propagate = resolvePropagate(o.propagate);
  const timeoutMs = duration(`timeoutMs`, pick(o, 'timeoutMs', standard));
  const attemptTimeoutMs = duration(`attemptTimeoutMs`, pick(o, 'attemptTimeoutMs', standard));
  return {
    timeoutMs,
    attemptTimeoutMs,
    attemptTimeout: new AttemptTimeout(
      attemptTimeoutMs,
      o.attemptTimeoutMs === undefined,
      undefined,
      budget,
    ),
    retry,
    hedge,
    onRetry,
    budget,
    circuit,
    concurrency,
    adaptive,
    rateLimit,
    propagate,
    telemetry:
      telemetry !== undefined && events !== undefined
        ? bothTelemetries(telemetry, events)
        : (telemetry ?? events),
  };
}
