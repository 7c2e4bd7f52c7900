import type { ResilienceListener } from '../attempts/resilience-events.js';
import type { ConcurrencyOptions } from '../attempts/resilience-options.js';
import type { Telemetry } from '../attempts/telemetry.js';
import type { CircuitBreaker } from '../breaker/types.js';
import type { RoutingSkipReason } from '../errors/routing-error.js';
import type { ProbeSetting } from '../health/probe.js';
import type { HealthRegistry } from '../health/registry.js';
import type { Subscribe } from '../internal/events.js';
import { type KnownKeys, keysOf } from '../internal/validate.js';
import type { AdaptiveLimiter } from '../limit/adaptive-limiter.js';
import type { Criticality } from '../limit/criticality.js';
import type { PropagateOptions } from '../propagation/propagate-options.js';
import type { RetryBudget, RetryBudgetOptions } from '../retry/budget.js';
import type { ErrorPolicy } from '../retry/verdict.js';
import type { Clock } from '../time/clock.js';
import type { RandomSource } from '../time/random.js';
import type { Sleep } from '../time/sleep.js';
import type { RouteProtection } from './protection.js';

/** One interchangeable resource (client, channel, link) the router spreads calls over. */
export interface RouteProvider<R> {
  /** Non-empty id, unique within the router; names the provider in health, events and errors. */
  id: string;
  /** The resource handed to the operation when this provider is chosen. */
  resource: R;
  /**
   * This provider's protection; each key given replaces the router's
   * `protection` key of the same name whole (nested objects are not merged).
   * Defaults to the router's.
   */
  protection?: RouteProtection;
}

/** Keys of {@link RouteProvider}. @internal */
export const ROUTE_PROVIDER_KEYS = keysOf<RouteProvider<unknown>>()([
  'id',
  'resource',
  'protection',
]);

/** The order in which providers are tried. */
export type RouteSelection =
  | {
      /** Highest priority first; ties by registration order. The default. */
      type: 'priority';
      /** Priority per provider id; missing ids are 0. Defaults to all 0. */
      priorities?: Readonly<Record<string, number>>;
    }
  | {
      /** Keep the last successful provider until it fails or its circuit refuses. */
      type: 'sticky';
    }
  | {
      /** Start each request at the next provider in registration order. */
      type: 'round-robin';
    }
  | {
      /** Lowest smoothed latency first; providers with no latency yet first of all. */
      type: 'least-latency';
    }
  | {
      /** Two random healthy providers; the one with fewer calls in flight (then lower latency) first. */
      type: 'power-of-two';
    }
  | {
      /**
       * Two random healthy providers; the one with the lower cost first, where
       * cost = peak-EWMA latency × (visits in flight + 1) (Finagle's, Linkerd's
       * and tower's least-loaded balancer). A slow answer raises a provider's
       * latency at once; lower ones bring it down over `decayMs`; a visit still
       * in flight counts its elapsed time, so a hung provider's cost rises
       * without any answer. The default of the adapters' multi-target routing.
       */
      type: 'least-loaded';
      /** Time constant (ms) over which a latency peak decays. Defaults to 10 000 (tower's and Linkerd's). */
      decayMs?: number;
      /** Latency (ms) a provider counts as until its first answer replaces it. Defaults to 30 (Linkerd's). */
      defaultLatencyMs?: number;
    }
  | {
      /** Every eligible provider at once; the first success wins and the others are aborted. */
      type: 'race';
    };

/** Name of a {@link RouteSelection}. */
export type RouteSelectionType = RouteSelection['type'];

/** Keys of a `'priority'` {@link RouteSelection}. @internal */
export const PRIORITY_SELECTION_KEYS = keysOf<Extract<RouteSelection, { type: 'priority' }>>()([
  'type',
  'priorities',
]);

/** Keys of a `'least-loaded'` {@link RouteSelection}. @internal */
export const LEAST_LOADED_SELECTION_KEYS = keysOf<
  Extract<RouteSelection, { type: 'least-loaded' }>
>()(['type', 'decayMs', 'defaultLatencyMs']);

/** Keys of every other {@link RouteSelection}. @internal */
export const PLAIN_SELECTION_KEYS = { type: true } as const satisfies KnownKeys<
  Extract<RouteSelection, { type: 'sticky' }>
>;

/** Hedging: start another provider when the current attempt is slow. Only for operations safe to repeat. */
export interface RouteHedge {
  /** Start a hedge when an attempt has been outstanding this long (ms). Give this or `percentile`. */
  delayMs?: number;
  /** Start a hedge after the router's observed latency at this percentile, in `(0, 100)`. */
  percentile?: number;
  /** Visits per request that hedging may start, the first included; an integer in `[2, 10]`. Defaults to 2. */
  attempts?: number;
  /**
   * With `percentile`: only latencies observed within this many ms count (at
   * most the last 512; re-checked at least every quarter window), so an old
   * burst of slow calls stops raising the hedge delay; with fewer than 20 in
   * the window, no hedge until more arrive. `Infinity` keeps the last 512
   * regardless of age. Defaults to 30 000.
   */
  windowMs?: number;
}

/** Keys of {@link RouteHedge}. @internal */
export const ROUTE_HEDGE_KEYS = keysOf<RouteHedge>()([
  'delayMs',
  'percentile',
  'attempts',
  'windowMs',
]);

/** What the operation receives besides the resource. */
export interface RouteContext {
  /** Aborts on caller cancellation, attempt timeout, or when another provider already won. */
  signal: AbortSignal;
  /** Id of the provider whose resource this is. */
  providerId: string;
  /** Attempt number on this provider, starting at 1. */
  attempt: number;
}

/** The operation the router runs on the chosen provider's resource. */
export type RouteOperation<R, T> = (resource: R, context: RouteContext) => T | PromiseLike<T>;

/** Per-call options of {@link Router.execute}. */
export interface RouteExecuteOptions<T> {
  /** Cancels the request: queued, between attempts, and inside the operation. Defaults to none. */
  signal?: AbortSignal | undefined;
  /** Replaces the router's `classify` for this call. Defaults to the router's. */
  classify?: ErrorPolicy | undefined;
  /**
   * The request's deadline as an absolute time on the router's clock, one the
   * operation enforces itself (e.g. the gRPC deadline it sends): no retry,
   * hedge or failover starts unless it can start before it, and a skipped
   * retry ends the request with the last attempt's error at once; a request
   * admitted at or after it visits no provider and rejects with a
   * `DeadlineExceededError`. The router sets no timer for it
   * (`protection.timeoutMs` is the router's own deadline). Inside a bound
   * server handler it is at most the inbound deadline less the margin
   * (`RouterOptions.propagate`). Defaults to none.
   */
  deadlineAt?: number | undefined;
  /** `false`: this request inherits nothing from the inbound call it runs under (see `RouterOptions.propagate`). Defaults to inheriting. */
  propagate?: false | undefined;
  /** How much the request matters under `concurrency.adaptive`: each provider refuses the lowest tier first. Defaults to the inbound call's, else `'default'`. */
  criticality?: Criticality | undefined;
  /** `false`: the request is not safe to repeat, so no derived attempt timeout cuts it (no retry or failover could follow the cut; what may be repeated stays `classify`'s). Defaults to `true`. */
  idempotent?: boolean | undefined;
  /** The method or procedure the request calls (a gRPC `/pkg.Service/Method`, a tRPC path): `onEvent` events and telemetry name it. Defaults to none. */
  method?: string | undefined;
  /**
   * Runs once after the final error (a `RoutingError`, a `failover: false` error)
   * or at once on queue overflow; never on success, cancellation or a throwing
   * policy. Its result or error is the call's. Defaults to none.
   */
  fallback?:
    | ((
        error: unknown,
        context: {
          /** The caller's `signal`, or a never-aborted signal when the call has none. */
          signal: AbortSignal;
        },
      ) => T | PromiseLike<T>)
    | undefined;
}

/** A provider was chosen for a visit. */
export interface RouteSelectedEvent {
  /** Id of the chosen provider. */
  providerId: string;
  /** Position of this visit in the request's traversal, starting at 1. */
  visit: number;
  /** True when this visit is a hedge started while another was outstanding. */
  hedge: boolean;
}

/** A provider was passed over. */
export interface RouteSkippedEvent {
  /** Id of the provider passed over. */
  providerId: string;
  /** `'circuit-open'` when its circuit (or health entry) is open, `'probe-busy'` when it is half-open with its recovery probe already out. */
  reason: RoutingSkipReason;
}

/** A provider's visit failed (after its own retries). */
export interface RouteFailedEvent {
  /** Id of the provider whose visit failed. */
  providerId: string;
  /** `name` of the final error, when it has one. */
  errorName: string | undefined;
  /** Whether the failure counted toward the provider's circuit and health. */
  counted: boolean;
  /** Duration of the visit in ms. */
  durationMs: number;
}

/** A hedge was started because the outstanding visit was slow. */
export interface RouteHedgedEvent {
  /** The provider still outstanding. */
  fromProviderId: string;
  /** The provider the hedge went to. */
  toProviderId: string;
  /** The hedge delay in force, in ms. */
  delayMs: number;
}

/** A provider whose circuit had opened answered its recovery probe successfully. */
export interface RouteRecoveredEvent {
  /** Id of the provider that recovered. */
  providerId: string;
}

/** Health settings of a router. */
export interface RouteHealthOptions<R> {
  /** Registry to record into and consult, e.g. one shared with other routers. Defaults to the router's own. */
  registry?: HealthRegistry;
  /**
   * Background probe per provider (gets the provider's resource), or `'none'`.
   * A passing probe also half-opens the provider's open circuit at once, so the
   * next request probes it without waiting out the open duration. Defaults to no probing.
   */
  probe?: ProbeSetting<R>;
  /** Time between probe rounds in ms. Defaults to 10 000. */
  intervalMs?: number;
  /** A probe running longer than this (ms) is a failure. Defaults to 2 000. */
  timeoutMs?: number;
  /** Consecutive failures that open a provider in the router's own registry (the breaker's name). Defaults to the breaker's, 5. */
  failureThreshold?: number;
  /** How long a provider stays open in the router's own registry, in ms (the breaker's name). Defaults to the breaker's, 200. */
  openDurationMs?: number;
}

/** Keys of {@link RouteHealthOptions}. @internal */
export const ROUTE_HEALTH_KEYS = keysOf<RouteHealthOptions<unknown>>()([
  'registry',
  'probe',
  'intervalMs',
  'timeoutMs',
  'failureThreshold',
  'openDurationMs',
]);

/** Options of {@link createRouter}. */
export interface RouterOptions<R> {
  /** The interchangeable providers, in registration order. At least one. */
  providers: readonly RouteProvider<R>[];
  /** Protection every provider inherits (retries, timeouts, circuit). Defaults to one attempt, no timeout, no circuit. */
  protection?: RouteProtection;
  /** Order in which providers are tried: an object or just its type name. Defaults to `{ type: 'priority' }`. */
  selection?: RouteSelection | RouteSelectionType;
  /**
   * Health: record outcomes into a registry and skip providers it reports
   * open; optionally probe them in the background. Defaults to a private
   * registry that only records (latency, counts) and is never consulted.
   */
  health?: RouteHealthOptions<R>;
  /** Start another provider when the current one is slow. Defaults to no hedging. */
  hedge?: RouteHedge | false;
  /**
   * The panic rule (Envoy's panic threshold, bounded). While every provider
   * is ejected (circuit not closed — half-open included, until its probe
   * answers — or not closed in the consulted health registry), the router
   * sends one recovery probe per probe interval (the shortest open duration
   * in force) across all providers, rotating between them, the first one
   * interval after the last circuit opened; the probed provider's circuit
   * half-opens at once, the probe gets one attempt and no failover, and a
   * success closes the circuit so traffic flows to it at once. Those probes
   * replace the circuits' own probes while everything is ejected, so a full
   * outage costs the upstream one attempt per interval however many
   * providers and requests there are; a health signal that half-opens a
   * circuit early (a passing health check, a channel back to READY) lets that
   * provider's probe go at once. While at least `threshold` (but not all) of
   * the providers are ejected, a `ratio` of the requests that would skip an
   * ejected provider visit it anyway as its probe. `false` turns both off
   * (each circuit then probes on its own). Defaults to `{ threshold: 1, ratio: 0.1 }`.
   */
  panic?: RoutePanic | false;
  /**
   * A bulkhead: requests routed at once (one slot covers the whole traversal)
   * and requests waiting. An attempt abandoned at its timeout keeps the slot
   * until its operation settles, so the operations running at the providers
   * never exceed `limit`. With `adaptive` instead, each provider gets a limit
   * of its own, discovered from its own latency: a provider at its limit is
   * passed over (skip reason `'concurrency-limit'`, neutral for its circuit)
   * while another has room, and a request every provider's limit refuses
   * rejects with a `ConcurrencyLimitError` (nothing was sent). A visit holds
   * one slot of its provider's limit. Defaults to unbounded.
   */
  concurrency?: ConcurrencyOptions | false;
  /** Judges each failed attempt: `retry`, `failover`, `countForCircuit`, `retryAfterMs`. Defaults to allowing all three. */
  classify?: ErrorPolicy;
  /**
   * One retry budget for the router: every request deposits once; every
   * retry, hedge and failover withdraws. A failover it refuses ends the
   * request with a `RoutingError` listing the visits so far. A budget, or
   * `createRetryBudget` options. Defaults to none.
   */
  budget?: RetryBudget | RetryBudgetOptions | false;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
  /** Waits for backoff, timeouts and hedge delays. Defaults to `systemSleep`. */
  sleep?: Sleep;
  /** Randomness for jitter and the two random choices of `'power-of-two'` and `'least-loaded'`. Defaults to `systemRandom`. */
  random?: RandomSource;
  /** Hears each request (visits as attempts, failovers, hedges, skips) and each provider's circuit; see `ResilienceOptions.telemetry`. Defaults to none. */
  telemetry?: Telemetry;
  /** Hears every provider's circuit changes and every request's failovers, hedges, retries and refusals; see `ResilienceOptions.onEvent`. Defaults to none. */
  onEvent?: ResilienceListener;
  /**
   * Inside a bound server handler, a request's deadline is at most the inbound
   * deadline less `marginMs`, it is cancelled with the inbound call, and an
   * overloaded end makes the server answer don't-retry; see
   * `ResilienceOptions.propagate`. `false` turns it off. Defaults to `{ marginMs: 5 }`.
   */
  propagate?: PropagateOptions | false;
}

/** Keys of {@link RouterOptions}. @internal */
export const ROUTER_OPTION_KEYS = keysOf<RouterOptions<unknown>>()([
  'providers',
  'protection',
  'selection',
  'health',
  'hedge',
  'panic',
  'concurrency',
  'classify',
  'budget',
  'clock',
  'sleep',
  'random',
  'telemetry',
  'onEvent',
  'propagate',
]);

/** The panic rule of a router: see {@link RouterOptions.panic}. */
export interface RoutePanic {
  /** Fraction of providers, in `(0, 1]`, that must be ejected for the router to panic. Defaults to 1 (all of them). */
  threshold?: number;
  /** Fraction, in `(0, 1]`, of refused requests sent to an ejected provider while in panic (1 sends all, as Envoy does). Defaults to 0.1. */
  ratio?: number;
}

/** Keys of {@link RoutePanic}. @internal */
export const ROUTE_PANIC_KEYS = keysOf<RoutePanic>()(['threshold', 'ratio']);

/** Spreads calls over interchangeable providers with failover, health and hedging. */
export interface Router<R> {
  /**
   * Runs `fn` on the chosen provider's resource, failing over as the
   * selection and error policy allow. Rejects with a `RoutingError` when every
   * candidate failed or was skipped, with the operation's error when the
   * policy said `failover: false`, with the abort reason on cancellation and
   * with `QueueFullError` on overflow. A non-function `fn` or an invalid
   * per-call option throws `TypeError` synchronously, before the call takes a slot.
   */
  execute<T>(fn: RouteOperation<R, T>, options?: RouteExecuteOptions<T>): Promise<T>;
  /** Provider ids in registration order. */
  readonly providerIds: readonly string[];
  /** The registry the router records into. */
  readonly health: HealthRegistry;
  /** A provider's circuit, or `undefined` when it has none. Throws for an unknown id. */
  circuit(providerId: string): CircuitBreaker | undefined;
  /** A provider's adaptive concurrency limit (`concurrency.adaptive`), or `undefined` when it has none. Throws for an unknown id. */
  limiter(providerId: string): AdaptiveLimiter | undefined;
  /**
   * A health signal from outside the router — a passing check of your own, a
   * connection back to ready: the provider's open circuit (and the registry's)
   * half-opens at once, and while every provider is ejected the next request
   * probes it ahead of the outage cadence. It never closes a circuit: that
   * probe does. The router's own health checks signal this way. Throws for an
   * unknown id.
   */
  signalHealthy(providerId: string): void;
  /**
   * What the transport knows of a provider: `false` while it cannot reach it
   * (e.g. a grpc-js channel in `TRANSIENT_FAILURE`), `true` once it is
   * connected again (also a health signal, as `signalHealthy`). An unreachable
   * provider is visited after every other one, so it gets a call or a probe
   * only when no other provider answered it. Throws for an unknown id.
   */
  signalReachable(providerId: string, reachable: boolean): void;
  /**
   * What a provider's health service said: `false` (`NOT_SERVING`) opens its
   * circuit now and visits it after every other provider, its probes too,
   * until it says `true` (`SERVING`), a health signal as `signalHealthy`. The
   * router's own health checks signal a passing probe and a watch's reported
   * status this way. Throws for an unknown id.
   */
  signalServing(providerId: string, serving: boolean): void;
  /** Requests holding a slot now. */
  readonly active: number;
  /** Requests waiting for a slot now. */
  readonly queued: number;
  /** Stops background probing. Idempotent; routing keeps working. */
  stop(): void;
  /** A provider was chosen for a visit. */
  readonly onSelected: Subscribe<RouteSelectedEvent>;
  /** A provider was passed over (`'circuit-open'`, `'probe-busy'`). */
  readonly onSkipped: Subscribe<RouteSkippedEvent>;
  /** A provider's visit failed after its own retries. */
  readonly onFailed: Subscribe<RouteFailedEvent>;
  /** A hedge was started. */
  readonly onHedged: Subscribe<RouteHedgedEvent>;
  /** A provider answered its recovery probe successfully. */
  readonly onRecovered: Subscribe<RouteRecoveredEvent>;
}
