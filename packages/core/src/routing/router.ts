import type { TelemetryTarget } from '../attempts/telemetry.js';
import type { CircuitBreaker } from '../breaker/types.js';
import { isQueueFullError } from '../errors/queue-full-error.js';
import { isRoutingError } from '../errors/routing-error.js';
import { abortError, neverAbortedSignal } from '../internal/abort.js';
import { checkCall } from '../internal/call-options.js';
import { onAbort } from '../internal/on-abort.js';
import { isThenable } from '../internal/thenable.js';
import { describeValue } from '../internal/validate.js';
import type { AdaptiveLimiter } from '../limit/adaptive-limiter.js';
import { criticalityOf } from '../limit/criticality.js';
import { createSlotPool, type SlotPool } from '../pool/pool.js';
import { inheritInbound } from '../propagation/inherit.js';
import type { ErrorPolicy, ErrorVerdict } from '../retry/verdict.js';
import { RouterCore } from './core.js';
import { ROUTER_TARGET, type RouterConfig, resolveRouterOptions } from './options.js';
import type { RouteExecuteOptions, RouteOperation, Router, RouterOptions } from './types.js';
import type { ProviderRuntime, RequestBounds } from './visit.js';

/** Rejects as soon as `signal` aborts, even if the traversal ignores it (its slot stays held until it settles). */
function raceAbort<T>(routed: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const stopListening = onAbort(signal, () => reject(abortError(signal)));
    routed.then(
      (value) => {
        stopListening();
        resolve(value);
      },
      (error: unknown) => {
        stopListening();
        reject(error);
      },
    );
  });
}

/** One request as `execute` admits it. */
interface RouteRequest<R, T> {
  fn: RouteOperation<R, T>;
  signal: AbortSignal | undefined;
  policy: RouteExecuteOptions<T>['classify'];
  fallback: RouteExecuteOptions<T>['fallback'];
  /** The request's deadline (on the router's clock) and whether it may be repeated. */
  bounds: RequestBounds;
}

/**
 * The verdict on a request's final error, as its inbound call hears it: the
 * policy's on the last provider's failure (a `RoutingError`'s cause), or none
 * when it throws.
 */
function finalVerdict(policy: ErrorPolicy | undefined, error: unknown): ErrorVerdict | undefined {
  const last = isRoutingError(error) ? error.cause : error;
  try {
    // Without a policy every failure is retryable (the router's default).
    return policy === undefined ? {} : policy(last);
  } catch {
    return undefined;
  }
}

/**
 * A request's hold on its concurrency slot when attempts may be abandoned at
 * their timeout: the slot goes back once the traversal has settled and every
 * operation it started has settled too, so the operations running at the
 * providers never exceed `concurrency.limit` (as in `protect`).
 */
class SlotHold {
  private live = 0;
  private routed = false;
  private ok = true;
  private released = false;

  constructor(private readonly give: (ok: boolean) => void) {}

  /** `fn`, counting the operations it starts until they settle. */
  wrap<R, T>(fn: RouteOperation<R, T>): RouteOperation<R, T> {
    const settled = () => {
      this.live--;
      this.release();
    };
    return (resource, context) => {
      const out = fn(resource, context);
      if (isThenable(out)) {
        this.live++;
        // A rejection here is the router's to report; this copy only counts.
        Promise.resolve(out).then(settled, settled);
      }
      return out;
    };
  }

  /** The traversal settled (`ok`: it succeeded). */
  readonly done = (ok: boolean): void => {
    this.routed = true;
    this.ok = ok;
    this.release();
  };

  private release(): void {
    if (this.released || !this.routed || this.live > 0) return;
    this.released = true;
    this.give(this.ok);
  }
}

class RouterImpl<R> implements Router<R> {
  private readonly core: RouterCore<R>;
  /** The bulkhead; a twin's is its source's (`shareLimiters`). */
  pool: SlotPool | undefined;
  /** Some provider may abandon an attempt at its timeout: slots wait for its operation. */
  private readonly holdsAbandoned: boolean;
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
    this.holdsAbandoned = config.providers.some(
      (p) =>
        !p.config.waitOnTimeout &&
        (p.config.attemptTimeoutMs !== Number.POSITIVE_INFINITY ||
          p.config.timeoutMs !== Number.POSITIVE_INFINITY),
    );
    this.onSelected = core.selected.on;
    this.onSkipped = core.skipped.on;
    this.onFailed = core.failed.on;
    this.onHedged = core.hedged.on;
    this.onRecovered = core.recovered.on;
    // A passing health check says the provider answers again: the next request probes it
    // instead of waiting out the open duration. A status it reported unhealthy ejects it.
    config.checker?.onProbeResult((e) => {
      if (e.healthy || e.reported) this.signalServing(e.provider, e.healthy);
    });
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
    return this.provider('circuit', providerId).breaker;
  }

  /** The providers' runtime state (`shareLimiters`). @internal */
  get providers(): readonly ProviderRuntime<R>[] {
    return this.config.providers;
  }

  limiter(providerId: string): AdaptiveLimiter | undefined {
    return this.provider('limiter', providerId).limiter;
  }

  signalHealthy(providerId: string): void {
    this.core.signalHealthy(this.provider('signalHealthy', providerId));
  }

  signalReachable(providerId: string, reachable: boolean): void {
    this.core.signalReachable(this.provider('signalReachable', providerId), reachable === true);
  }

  signalServing(providerId: string, serving: boolean): void {
    this.core.signalServing(this.provider('signalServing', providerId), serving === true);
  }

  private provider(method: string, providerId: string) {
    const p = this.config.providers.find((x) => x.id === providerId);
    if (p === undefined) {
      throw new TypeError(`${method}(providerId): unknown provider ${JSON.stringify(providerId)}`);
    }
    return p;
  }

  stop(): void {
    this.config.checker?.stop();
  }

  /** One telemetry target per method named: calls of one target share its telemetry objects. */
  private readonly targets = new Map<string, TelemetryTarget>();

  private targetOf(method: string): TelemetryTarget {
    let target = this.targets.get(method);
    if (target === undefined) {
      target = Object.freeze({ ...ROUTER_TARGET, method });
      this.targets.set(method, target);
    }
    return target;
  }

  execute<T>(fn: RouteOperation<R, T>, options?: RouteExecuteOptions<T>): Promise<T> {
    // Before the slot is taken: a bad call must not harm the next one.
    checkCall('router.execute', 'fn', fn, options);
    const deadlineAt = options?.deadlineAt ?? Number.POSITIVE_INFINITY;
    if (typeof deadlineAt !== 'number' || Number.isNaN(deadlineAt)) {
      throw new TypeError(
        `router.execute options.deadlineAt must be a number, got ${describeValue(deadlineAt)}`,
      );
    }
    const idempotent = options?.idempotent ?? true;
    if (typeof idempotent !== 'boolean') {
      throw new TypeError(
        `router.execute options.idempotent must be a boolean, got ${describeValue(idempotent)}`,
      );
    }
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const policy = options?.classify ?? this.config.classify;
    const fallback = options?.fallback;
    // Read only when a limit uses it: the inbound call's criticality is looked up otherwise.
    const criticality =
      this.core.limited || options?.criticality !== undefined
        ? criticalityOf('router.execute options.criticality', options?.criticality)
        : 'default';
    const method = options?.method;
    if (method !== undefined && typeof method !== 'string') {
      throw new TypeError(
        `router.execute options.method must be a string, got ${describeValue(method)}`,
      );
    }
    const target = method === undefined ? ROUTER_TARGET : this.targetOf(method);
    const inherited = inheritInbound(this.config.propagate, options?.propagate);
    if (inherited === undefined) {
      return this.admit({
        fn,
        signal,
        policy,
        fallback,
        bounds: { deadlineAt, idempotent, criticality, target },
      });
    }
    // Inside a bound handler: the inbound deadline (less the margin) bounds the request, and the
    // inbound call's cancellation cancels it.
    const linked = inherited.linkUntilDeadline(signal);
    const routed = this.admit({
      fn,
      signal: linked.signal,
      policy,
      fallback,
      bounds: {
        deadlineAt: Math.min(deadlineAt, this.config.clock() + inherited.remainingMs()),
        idempotent,
        criticality,
        target,
      },
    });
    routed.then(
      () => {
        linked.release();
        inherited.succeeded();
      },
      (error: unknown) => {
        linked.release();
        inherited.failed(error, finalVerdict(policy, error));
      },
    );
    return routed;
  }

  /** Admits one request to a slot (or queues it), then routes it. */
  private admit<T>(request: RouteRequest<R, T>): Promise<T> {
    const { fn, signal, policy, fallback, bounds } = request;
    let routed: Promise<T>;
    const pool = this.pool;
    if (pool === undefined) {
      routed = this.core.route(fn, signal ?? neverAbortedSignal, policy, fallback, bounds);
    } else if (pool.tryTake()) {
      // A free slot, taken synchronously; given back when the traversal (and its fallback) settles.
      if (this.holdsAbandoned) {
        const hold = new SlotHold((ok) => pool.give(ok));
        routed = this.core.route(
          hold.wrap(fn),
          signal ?? neverAbortedSignal,
          policy,
          fallback,
          bounds,
        );
        routed.then(
          () => hold.done(true),
          () => hold.done(false),
        );
      } else {
        routed = this.core.route(fn, signal ?? neverAbortedSignal, policy, fallback, bounds);
        routed.then(pool.giveOk, pool.giveFailed);
      }
    } else {
      // A full queue: the pool refuses the request below, which never reaches a traversal.
      if (pool.queued >= pool.maxQueue) this.core.refuse('queue-full', bounds.target);
      if (this.holdsAbandoned) {
        routed = this.queueHolding(pool, request);
      } else {
        let started = false;
        routed = pool.run(
          (s) => {
            started = true;
            return this.core.route(fn, s, policy, fallback, bounds);
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
    }
    return signal === undefined ? routed : raceAbort(routed, signal);
  }

  /** The queued path when slots wait for abandoned operations: the pool's task ends with the hold. */
  private queueHolding<T>(pool: SlotPool, request: RouteRequest<R, T>): Promise<T> {
    const { fn, signal, policy, fallback, bounds } = request;
    return new Promise<T>((resolve, reject) => {
      let started = false;
      pool
        .run(
          (s) =>
            new Promise<void>((released) => {
              started = true;
              const hold = new SlotHold(() => released());
              const routed = this.core.route(hold.wrap(fn), s, policy, fallback, bounds);
              routed.then(
                (value) => {
                  hold.done(true);
                  resolve(value);
                },
                (error: unknown) => {
                  hold.done(false);
                  reject(error);
                },
              );
            }),
          { signal },
        )
        .then(undefined, (error: unknown) => {
          if (started) return;
          // Refused while queued (full queue, or the caller aborted): only the refusal gets a fallback.
          if (fallback === undefined || !isQueueFullError(error)) {
            reject(error);
            return;
          }
          Promise.resolve()
            .then(() => fallback(error, { signal: signal ?? neverAbortedSignal }))
            .then(resolve, reject);
        });
    });
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
 *     circuit: {}, // the breaker's defaults: the standard circuit
 *   },
 * });
 * const user = await router.execute((client, { signal }) => client.getUser(id, { signal }));
 */
export function createRouter<R>(options: RouterOptions<R>): Router<R> {
  return new RouterImpl(resolveRouterOptions(options));
}

/**
 * Makes `twin` use `source`'s concurrency limits, matched by provider id: the
 * adaptive ones (`concurrency.adaptive`) and the bulkhead (`{ limit, maxQueue }`).
 * An adapter's twin routers over the same targets (one with hedging, one
 * without; one per `methods` entry) hold one limit per target and one
 * bulkhead, as they hold one circuit.
 * @internal
 */
export function shareLimiters<R>(twin: Router<R>, source: Router<R>): void {
  if (twin === source || !(twin instanceof RouterImpl) || !(source instanceof RouterImpl)) return;
  for (const p of (twin as RouterImpl<R>).providers) p.limiter = source.limiter(p.id);
  twin.pool = (source as RouterImpl<R>).pool;
}
