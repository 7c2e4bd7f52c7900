import type { CircuitBreaker, CircuitStateChange } from '../breaker/types.js';
import { type TimerWheel, timerWheelFor } from '../deadline/timer-wheel.js';
import { abortError } from '../internal/abort.js';
import { checkCall } from '../internal/call-options.js';
import { EventEmitter, type Subscribe } from '../internal/events.js';
import { type AdaptiveLimiter, adaptiveLimiterOf } from '../limit/adaptive-limiter.js';
import { type Criticality, criticalityOf } from '../limit/criticality.js';
import { createSlotPool, type SlotPool } from '../pool/pool.js';
import { inheritInbound } from '../propagation/inherit.js';
import type { ErrorPolicy } from '../retry/verdict.js';
import { monotonicClock, systemClock } from '../time/clock.js';
import { systemSleep } from '../time/sleep.js';
import { Call, type RunnerShared } from './call.js';
import { type ProtectConfig, resolveProtectOptions } from './options.js';
import type {
  ProtectedFunction,
  ProtectFallbackEvent,
  ProtectOptions,
  ProtectRejectEvent,
  ProtectRetryEvent,
  ProtectRunner,
  ProtectRunOptions,
  ProtectTimeoutEvent,
} from './types.js';

const noStateChanges: Subscribe<CircuitStateChange> = () => ({ dispose() {} });

class Runner implements RunnerShared {
  readonly wheel: TimerWheel;
  readonly breaker: CircuitBreaker | undefined;
  readonly pool: SlotPool | undefined;
  readonly limiter: AdaptiveLimiter | undefined;
  readonly retries = new EventEmitter<ProtectRetryEvent>();
  readonly rejects = new EventEmitter<ProtectRejectEvent>();
  readonly fallbacks = new EventEmitter<ProtectFallbackEvent>();
  readonly timeouts = new EventEmitter<ProtectTimeoutEvent>();
  readonly timed: boolean;
  readonly shareClock: boolean;
  running = 0;

  constructor(readonly config: ProtectConfig) {
    if (config.sleep === systemSleep) config.sleep = undefined;
    this.timed =
      config.attemptTimeoutMs !== Number.POSITIVE_INFINITY ||
      config.timeoutMs !== Number.POSITIVE_INFINITY;
    // On the host timer, deadlines go to the process-wide timer wheel; an injected sleep drives a wheel of its own.
    this.wheel = timerWheelFor(this.timed ? config.sleep : undefined, config.clock);
    this.shareClock = config.telemetry !== undefined && config.telemetry.clock === this.wheel.now;
    this.breaker = config.circuit;
    const c = config.concurrency;
    if (c !== undefined) this.pool = createSlotPool({ concurrency: c.limit, maxQueue: c.maxQueue });
    if (config.adaptive !== undefined) {
      // Latency samples need sub-millisecond resolution, unless a clock is injected (a manual one in tests).
      const clock = config.clock === systemClock ? monotonicClock : config.clock;
      this.limiter = adaptiveLimiterOf(config.adaptive, clock);
      config.telemetry?.concurrencyLimit(this.limiter, config.target);
    }
    if (config.circuit !== undefined) config.telemetry?.circuit(config.circuit, config.target);
  }

  run<T>(fn: ProtectedFunction<T>, options?: ProtectRunOptions<T>): Promise<T> {
    // Before anything is taken (slot, permit, timer): a bad call must not harm the next one.
    checkCall('protect run', 'fn', fn, options);
    let signal: AbortSignal | undefined;
    let fallback: ProtectRunOptions<T>['fallback'];
    let policy: ErrorPolicy | undefined = this.config.classify;
    let propagate: false | undefined;
    if (options !== undefined) {
      signal = options.signal;
      fallback = options.fallback;
      propagate = options.propagate;
      if (options.classify !== undefined) policy = options.classify;
    }
    const criticality: Criticality = criticalityOf(
      'protect run options.criticality',
      options?.criticality,
    );
    // An already-aborted call never runs, never queues and gets no fallback.
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const call = new Call<T>({ shared: this, fn, signal, fallback, policy });
    const inherited = inheritInbound(this.config.propagate, propagate);
    if (inherited !== undefined) call.inherit(inherited);
    return call.admit(
      {
        breaker: this.breaker,
        bucket: this.config.rateLimit,
        limiter: this.limiter,
        pool: this.pool,
      },
      criticality,
    );
  }
}

/**
 * Creates a runner that composes, outermost first: concurrency slot (with
 * queue) → rate limit (one token per call) → circuit (counted once per call) →
 * the call's deadline (`timeoutMs`) → retries on the attempt engine (backoff or
 * server pushback, retry budget; a retry that cannot start before the deadline
 * is skipped) → adaptive throttle → per-attempt timeout → `fn`. A fallback
 * replaces the final error, or a refusal (queue full, rate limited, circuit
 * open). Options are `ResilienceOptions` (without `hedge`, which is the
 * router's) plus `classify`, `throttle`, `name` and `timeoutMode`.
 *
 * Inside a bound server handler (`propagate`, on by default) the call's
 * deadline is at most the inbound deadline less the margin, taken when the
 * call leaves the queue; it is cancelled with the inbound call, and an
 * overloaded end makes the server answer don't-retry.
 *
 * Timeouts share one process-wide timer (it holds the process open while a
 * deadline is pending), and the attempt's `signal` — its own, never aborted
 * by another call's deadline — is only created when the callback reads it.
 * @example
 * const run = protect({
 *   retry: { attempts: 3, backoff: { baseDelayMs: 100, strategy: 'exponential' } },
 *   attemptTimeoutMs: 2_000,
 *   timeoutMs: 5_000,
 *   concurrency: { limit: 16, maxQueue: 100 },
 *   circuit: {}, // the breaker's defaults: the standard circuit
 * });
 * const user = await run(({ signal }) => fetchUser(id, { signal }), {
 *   fallback: () => cachedUser(id),
 * });
 */
export function protect(options: ProtectOptions = {}): ProtectRunner {
  const runner = new Runner(resolveProtectOptions(options));
  const run = <T>(fn: ProtectedFunction<T>, callOptions?: ProtectRunOptions<T>): Promise<T> =>
    runner.run(fn, callOptions);
  const breaker = runner.breaker;
  const pool = runner.pool;
  Object.defineProperties(run, {
    run: { value: run },
    circuit: { value: breaker },
    active: { get: () => activeCalls(runner) },
    queued: { get: () => (pool === undefined ? 0 : pool.queued) },
    onRetry: { value: runner.retries.on },
    onStateChange: { value: breaker === undefined ? noStateChanges : breaker.onStateChange },
    onReject: { value: runner.rejects.on },
    onFallback: { value: runner.fallbacks.on },
    onTimeout: { value: runner.timeouts.on },
  });
  return run as ProtectRunner;
}

/** Calls holding a slot: of the adaptive limit, of the pool, or (with neither) running. */
function activeCalls(runner: Runner): number {
  if (runner.limiter !== undefined) return runner.limiter.inFlight;
  if (runner.pool !== undefined) return runner.pool.active;
  return runner.running;
}
