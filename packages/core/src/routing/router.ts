import type { CircuitBreaker } from '../breaker/types.js';
import { isQueueFullError } from '../errors/queue-full-error.js';
import { abortError, neverAbortedSignal } from '../internal/abort.js';
import { checkCall } from '../internal/call-options.js';
import { createSlotPool, type SlotPool } from '../pool/pool.js';
import { RouterCore } from './core.js';
import { type RouterConfig, resolveRouterOptions } from './options.js';
import type { RouteExecuteOptions, RouteOperation, Router, RouterOptions } from './types.js';

/** Rejects as soon as `signal` aborts, even if the traversal ignores it (its slot stays held until it settles). */
function raceAbort<T>(routed: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    routed.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

class RouterImpl<R> implements Router<R> {
  private readonly core: RouterCore<R>;
  private readonly pool: SlotPool | undefined;
  readonly providerIds: readonly string[];
  readonly onSelected;
  readonly onSkipped;
  readonly onFailed;
  readonly onHedged;
  readonly onRecovered;

  constructor(private readonly config: RouterConfig<R>) {
    const core = new RouterCore(config);
    this.core = core;
    const c = config.concurrency;
    this.pool =
      c === undefined ? undefined : createSlotPool({ concurrency: c.limit, maxQueue: c.maxQueue });
    this.providerIds = Object.freeze(config.providers.map((p) => p.id));
    this.onSelected = core.selected.on;
    this.onSkipped = core.skipped.on;
    this.onFailed = core.failed.on;
    this.onHedged = core.hedged.on;
    this.onRecovered = core.recovered.on;
  }

  get health() {
    return this.config.health;
  }

  get active(): number {
    return this.pool?.active ?? 0;
  }

  get queued(): number {
    return this.pool?.queued ?? 0;
  }

  circuit(providerId: string): CircuitBreaker | undefined {
    const p = this.config.providers.find((x) => x.id === providerId);
    if (p === undefined) {
      throw new TypeError(`circuit(providerId): unknown provider ${JSON.stringify(providerId)}`);
    }
    return p.breaker;
  }

  stop(): void {
    this.config.checker?.stop();
  }

  execute<T>(fn: RouteOperation<R, T>, options?: RouteExecuteOptions<T>): Promise<T> {
    // Before the slot is taken: a bad call must not harm the next one.
    checkCall('router.execute', 'fn', fn, options);
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const policy = options?.classify ?? this.config.classify;
    const fallback = options?.fallback;
    let routed: Promise<T>;
    const pool = this.pool;
    if (pool === undefined) {
      routed = this.core.route(fn, signal ?? neverAbortedSignal, policy, fallback);
    } else if (pool.tryTake()) {
      // A free slot, taken synchronously; given back when the traversal (and its fallback) settles.
      routed = this.core.route(fn, signal ?? neverAbortedSignal, policy, fallback);
      routed.then(pool.giveOk, pool.giveFailed);
    } else {
      let started = false;
      routed = pool.run(
        (s) => {
          started = true;
          return this.core.route(fn, s, policy, fallback);
        },
        { signal },
      );
      if (fallback !== undefined) {
        routed = routed.catch((error: unknown) => {
          // A traversal that started has run its own fallback; here only the queue's refusal gets one.
          if (started || !isQueueFullError(error)) throw error;
          return fallback(error, { signal: signal ?? neverAbortedSignal });
        });
      }
    }
    return signal === undefined ? routed : raceAbort(routed, signal);
  }
}

/**
 * Creates a router that spreads calls over interchangeable providers
 * (clients, channels, links): it orders them by `selection`, skips those whose
 * circuit or health is open, visits each at most once per request with its
 * own `protect()`-style retries and timeout, fails over on error, optionally
 * hedges slow calls, and rejects with a `RoutingError` listing every visit
 * when no provider succeeds.
 * @example
 * const router = createRouter({
 *   providers: [{ id: 'eu', resource: euClient }, { id: 'us', resource: usClient }],
 *   protection: {
 *     attemptTimeoutMs: 2_000,
 *     retry: { attempts: 2 },
 *     circuit: { failureThreshold: 5, openDurationMs: 30_000 },
 *   },
 * });
 * const user = await router.execute((client, { signal }) => client.getUser(id, { signal }));
 */
export function createRouter<R>(options: RouterOptions<R>): Router<R> {
  return new RouterImpl(resolveRouterOptions(options));
}
