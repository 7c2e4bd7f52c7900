import {
  type CircuitBreaker,
  type CircuitBreakerOptions,
  createHealthChecker,
  createHealthRegistry,
  createRetryBudget,
  createRouter,
  type HealthChecker,
  type HealthRegistry,
  type MethodOptions,
  type ResilienceListener,
  type RetryBudget,
  type RetryBudgetOptions,
  type Router,
  type RouterOptions,
  STANDARD_RESILIENCE,
  type Telemetry,
} from '@breakwater/core';
import type {
  Disposable,
  PropagateOptions,
  RouteProtection,
  Subscribe,
} from '@breakwater/core/adapter';
import {
  compileSelector,
  createGrpcStatusClassifier,
  type GrpcStatusClassifier,
  type MethodSelector,
} from '@breakwater/core/grpc';
import type { HealthRecorder, ProbeResultEvent, ProbeSetting } from '@breakwater/core/health';
import {
  ADAPTER_SELECTION,
  callsOnlyTelemetry,
  checkNumber,
  checkOptions,
  GRPC_METHOD_SELECTORS,
  keysOf,
  type MethodEntry,
  optionPath,
  optionTypeError,
  resolveMethods,
  resolvePropagate,
  shareLimiters,
} from '@breakwater/core/internal';
import { type Clock, type RandomSource, type Sleep, systemClock } from '@breakwater/core/time';
import type {
  RouteFailedEvent,
  RouteHedge,
  RouteHedgedEvent,
  RoutePanic,
  RouteRecoveredEvent,
  RouteSelectedEvent,
  RouteSelection,
  RouteSelectionType,
  RouteSkippedEvent,
} from '@breakwater/core/types';
import {
  Channel,
  type ChannelCredentials,
  type ChannelInterface,
  type ChannelOptions,
  connectivityState,
  credentials as grpcCredentials,
} from '@grpc/grpc-js';
import { disableGrpcRetries, eagerReconnect } from './channel-options.js';
import { combinedState, watchCombinedState, watchReachable } from './internals/connectivity.js';
import { RoutedCall } from './internals/routed-call.js';
import {
  type RoutingStack,
  type RoutingState,
  type RoutingTargetRuntime,
  routingErrorPolicy,
} from './internals/routing-state.js';

/**
 * Retries of a call on one target before it fails over: the `retry` part of
 * the one options object (`ResilienceOptions`), run by the core router.
 */
export type RoutingProtection = Pick<RouteProtection, 'retry'>;

/** Keys of {@link RoutingProtection}. @internal */
export const ROUTING_PROTECTION_KEYS = keysOf<RoutingProtection>()(['retry']);

/** One backend of a routing channel. */
export interface RoutingTarget {
  /** Non-empty, unique id: names the target in health, events and errors. */
  id: string;
  /** grpc-js target (`host:port`, `dns:///…`); a channel is created for it. Give this or `channel`. */
  address?: string;
  /** An existing channel to use instead of `address` (not closed by `close()`). Defaults to none. */
  channel?: ChannelInterface;
  /** Credentials of the created channel. Defaults to insecure. */
  credentials?: ChannelCredentials;
  /**
   * Options of the created channel, over `disableGrpcRetries` and `eagerReconnect`. Defaults to none.
   */
  options?: ChannelOptions;
  /** Overrides of the shared `protection` for this target. Defaults to the shared one. */
  protection?: RoutingProtection;
}

/** Keys of {@link RoutingTarget}. @internal */
export const ROUTING_TARGET_KEYS = keysOf<RoutingTarget>()([
  'id',
  'address',
  'channel',
  'credentials',
  'options',
  'protection',
]);

/**
 * Background health of the targets: optional probes, whose failures count
 * toward the target's `circuit` like failed calls, and the registry that
 * records every outcome (counts, latency).
 */
export interface RoutingHealthOptions {
  /**
   * Registry to record into and consult (e.g. one shared with other channels):
   * a target it reports open gets no calls. Defaults to a new one that only
   * records (the target's `circuit` decides).
   */
  registry?: HealthRegistry;
  /** Background probe per target address (e.g. `grpcHealthProbe`), or `'none'`. Defaults to none. */
  probe?: ProbeSetting<string>;
  /** Time between probe rounds in ms. Defaults to 5 000. */
  intervalMs?: number;
  /** A probe running longer than this (ms) is a failure. Defaults to 2 000. */
  timeoutMs?: number;
}

/** Keys of {@link RoutingHealthOptions}. @internal */
export const ROUTING_HEALTH_KEYS = keysOf<RoutingHealthOptions>()([
  'registry',
  'probe',
  'intervalMs',
  'timeoutMs',
]);

/** Options of {@link createRoutingChannel}. */
export interface RoutingChannelOptions {
  /** The backends, in registration order. At least one. */
  targets: readonly RoutingTarget[];
  /** Order in which targets are tried (core router selection). Defaults to `'least-loaded'` (power of two choices over peak-EWMA latency × calls in flight). */
  selection?: RouteSelection | RouteSelectionType;
  /** Methods safe to repeat: only their calls hedge, and fail over or retry after any failure the classifier allows; other methods only when the request never left (`neverSent`). Defaults to none. */
  idempotent?: MethodSelector;
  /** Retries on one target before failing over (`{ retry: { attempts, backoff } }`). Defaults to one attempt per target. */
  protection?: RoutingProtection;
  /** Deadline of each attempt in ms, sent to the server (never past the call's); makes its `DEADLINE_EXCEEDED` fail over. Defaults to none. */
  attemptTimeoutMs?: number | false;
  /** Start the call on the next target when the current one is slow (idempotent calls only): `{ delayMs | percentile, attempts }`. Defaults to none. */
  hedge?: RouteHedge | false;
  /**
   * Each target's circuit breaker (`createCircuitBreaker` options: `failureThreshold`, `openDurationMs`, `window`, …;
   * each target gets its own, with one recovery call at a time), counting each call once after its retries on the
   * target, and failed probes; `false` for none. Defaults to `STANDARD_RESILIENCE.circuit`.
   */
  circuit?: CircuitBreakerOptions | false;
  /** Background probes and the registry of outcomes. Defaults to no probes and a registry that only records. */
  health?: RoutingHealthOptions;
  /**
   * `{ adaptive }`: each target's own adaptive concurrency limit (the core router's `concurrency`), criticality
   * from the inbound call; a target at its limit is passed over, and a call every target refuses ends with
   * `RESOURCE_EXHAUSTED` (its `cause` a `ConcurrencyLimitError`) without being sent. Defaults to none.
   */
  concurrency?: RouterOptions<unknown>['concurrency'];
  /** The core router's panic rule: when every target is ejected, one call per probe interval goes to the targets in turn as their recovery call (the outage gate); when `threshold` (< 1) of them are, a `ratio` of the calls go to one anyway. Defaults to `{ threshold: 1, ratio: 0.1 }`. */
  panic?: RoutePanic | false;
  /** Status → verdict (retry, failover, count). Defaults to `createGrpcStatusClassifier()`. */
  classify?: GrpcStatusClassifier;
  /** One retry budget: every routed call deposits; every retry, hedge and failover withdraws. A budget or its options. Defaults to none. */
  budget?: RetryBudget | RetryBudgetOptions | false;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
  /** Waits for backoff and hedge delays. Defaults to `systemSleep`. */
  sleep?: Sleep;
  /** Randomness for jitter and power-of-two. Defaults to `systemRandom`. */
  random?: RandomSource;
  /**
   * Hears each routed call (visits as attempts, failovers, hedges, refusals), each target's
   * circuit and the targets' health, once each (e.g. `otelTelemetry()` of `@breakwater/otel`;
   * see `ResilienceOptions.telemetry`). Defaults to none.
   */
  telemetry?: Telemetry;
  /** Hears every target's circuit changes and every call's failovers, hedges, retries and refusals; see `ResilienceOptions.onEvent`. Defaults to none. */
  onEvent?: ResilienceListener;
  /**
   * Inside a bound server handler (`breakwaterServerInterceptor`, …), a call's deadline is at most the
   * inbound deadline less `marginMs`, it is cancelled with the inbound call, and an overloaded end makes
   * the server answer don't-retry; see `ResilienceOptions.propagate`. `false` turns it off (a channel
   * sees no per-call options). Defaults to `{ marginMs: 5 }`.
   */
  propagate?: PropagateOptions | false;
  /**
   * Settings per method (`'/pkg.Service/Method'`) or service (`'pkg.Service'`): a call takes the most
   * specific entry, merged over these options (`retry`, `hedge`, `circuit` field by field; `timeoutMs`
   * bounds the call when earlier than its deadline). An entry's methods get their own circuit per target;
   * the targets, health, budget and concurrency limits stay the channel's. Defaults to none.
   * @example
   * methods: { '/shop.Catalog/Export': { timeoutMs: 60_000, retry: false } }
   */
  methods?: Readonly<Record<string, MethodOptions>>;
}

/** Keys of {@link RoutingChannelOptions}. @internal */
export const ROUTING_CHANNEL_KEYS = keysOf<RoutingChannelOptions>()([
  'targets',
  'selection',
  'idempotent',
  'protection',
  'attemptTimeoutMs',
  'hedge',
  'circuit',
  'health',
  'concurrency',
  'panic',
  'classify',
  'budget',
  'clock',
  'sleep',
  'random',
  'telemetry',
  'onEvent',
  'propagate',
  'methods',
]);

/** What a routing channel adds to the grpc-js `Channel` interface. */
export interface RoutingChannelApi {
  /** Target ids in registration order. */
  readonly targetIds: readonly string[];
  /** The registry holding every target's counts and latency. */
  readonly health: HealthRegistry;
  /**
   * The circuit of target `targetId` for calls of `method` (a full path; a `methods` entry has
   * its own circuit per target), or the client's when left out; `undefined` with `circuit: false`.
   * Throws for an unknown id.
   */
  circuit(targetId: string, method?: string): CircuitBreaker | undefined;
  /** Probes every target now (when a probe is configured); resolves with what was recorded. */
  checkHealth(): Promise<ProbeResultEvent[]>;
  /** A target was chosen for an attempt. */
  readonly onSelected: Subscribe<RouteSelectedEvent>;
  /** A target was passed over (`'circuit-open'`, `'probe-busy'`). */
  readonly onSkipped: Subscribe<RouteSkippedEvent>;
  /** An attempt on a target failed. */
  readonly onFailed: Subscribe<RouteFailedEvent>;
  /** A hedge was started on another target. */
  readonly onHedged: Subscribe<RouteHedgedEvent>;
  /** An open target answered its recovery call. */
  readonly onRecovered: Subscribe<RouteRecoveredEvent>;
}

/**
 * A grpc-js channel that routes every call to one of several targets. Typed
 * as grpc-js's `Channel` class so APIs that name the class (nice-grpc's
 * `createClient`) accept it; it implements the `Channel` interface, which is
 * all grpc-js clients use.
 */
export type RoutingChannel = Channel & RoutingChannelApi;

function buildTargets(list: unknown): RoutingTargetRuntime[] {
  if (!Array.isArray(list) || list.length === 0) {
    throw optionTypeError('targets', `must be a non-empty array, got ${String(list)}`);
  }
  // Every target is checked before any channel is opened, so a bad one leaks none.
  list.forEach((t: unknown, i) => {
    checkOptions(undefined, t, ROUTING_TARGET_KEYS, `targets[${i}]`, false);
    const own = (t as RoutingTarget).protection;
    checkOptions(undefined, own, ROUTING_PROTECTION_KEYS, `targets[${i}].protection`);
  });
  return list.map((t: RoutingTarget, i) => {
    if ((t.address === undefined) === (t.channel === undefined)) {
      throw optionTypeError(`targets[${i}]`, `needs exactly one of address or channel`);
    }
    if (t.channel !== undefined) {
      if (typeof t.channel.createCall !== 'function') {
        throw optionTypeError(`targets[${i}].channel`, `must be a grpc-js Channel`);
      }
      return { id: t.id, address: t.channel.getTarget(), channel: t.channel, owned: false };
    }
    if (typeof t.address !== 'string' || t.address.length === 0) {
      throw optionTypeError(
        `targets[${i}].address`,
        `must be a non-empty string, got ${String(t.address)}`,
      );
    }
    const channel = new Channel(t.address, t.credentials ?? grpcCredentials.createInsecure(), {
      ...disableGrpcRetries,
      ...eagerReconnect,
      ...t.options,
    });
    return { id: t.id, address: t.address, channel, owned: true };
  });
}

/** Subscribes `listener` on every router's event of one kind. */
function eachRouter<E>(
  routers: readonly Router<RoutingTargetRuntime>[],
  pick: (r: Router<RoutingTargetRuntime>) => Subscribe<E>,
): Subscribe<E> {
  return (listener) => {
    const subs: Disposable[] = routers.map((r) => pick(r)(listener));
    return {
      dispose: () => {
        for (const s of subs) s.dispose();
      },
    };
  };
}

/**
 * A grpc-js `Channel` over several targets (each its own grpc-js channel):
 * every call goes to a target the core router picks — `priority`,
 * `round-robin`, `least-latency`, `power-of-two`, `sticky` or `race` —
 * skipping targets whose circuit is open. Calls of `idempotent` methods whose
 * request is one message (unary, server streaming) fail over to the next
 * target on a failure the classifier allows (server streams only before their
 * first message), retry per `protection`, and hedge per `hedge`; calls of
 * other methods with such a request fail over or retry only when it never
 * left (no connection, stream refused); request streams run on one target.
 * No retry or failover starts unless it can start before the call's
 * deadline. Outcomes feed each target's `circuit`; a `health.probe` (e.g.
 * `grpcHealthProbe`) checks targets in the background, its failures counted
 * by the circuit too.
 * Pass it as `channelOverride` to any grpc-js client, or to nice-grpc's
 * `createClient(definition, channel)`. Target channels are created with
 * `disableGrpcRetries`, so attempts never multiply.
 * @example
 * const channel = createRoutingChannel({
 *   targets: [{ id: 'a', address: 'a:50051' }, { id: 'b', address: 'b:50051' }],
 *   idempotent: idempotentMethods(packageDefinition),
 *   health: { probe: grpcHealthProbe },
 * });
 * const client = new EchoClient('routed', credentials.createInsecure(), { channelOverride: channel });
 */
export function createRoutingChannel(options: RoutingChannelOptions): RoutingChannel {
  return optionPath('', () => build(options), 'createRoutingChannel');
}

/**
 * The router reports a target's settings as `providers[i]` and the circuit as
 * `protection.circuit`; the caller wrote `targets[i]` and `circuit`.
 */
const asTargets = (path: string): string =>
  path.replace(/^providers\[/, 'targets[').replace(/^protection\.circuit\b/, 'circuit');

/** Failures in a row that open the routing channel's own registry: never (`circuit` decides). */
const RECORD_ONLY = Number.MAX_SAFE_INTEGER;

/** The one circuit setting every target gets its own breaker from, or `undefined` for none. */
function circuitOf(value: RoutingChannelOptions['circuit']): CircuitBreakerOptions | undefined {
  if (value === false) return undefined;
  if (value === undefined) return STANDARD_RESILIENCE.circuit as CircuitBreakerOptions;
  if (typeof value === 'object' && value !== null && 'tryAcquire' in value) {
    throw optionTypeError(
      'circuit',
      'is a CircuitBreaker, which every target would share: give createCircuitBreaker options (each target gets its own breaker)',
    );
  }
  return value;
}

/** What a `methods` entry (or the client's options) sets for a routing stack: core's merge works on this view. */
interface RouteView {
  timeoutMs?: number | false;
  attemptTimeoutMs?: number | false;
  retry?: RoutingProtection['retry'];
  hedge?: RouteHedge | false;
  circuit?: CircuitBreakerOptions | false;
}

/** A duration option as ms, or `undefined` for none. */
function durationOf(name: string, value: number | false | undefined): number | undefined {
  return value === undefined || value === false
    ? undefined
    : checkNumber(name, value, { above: 0 });
}

function isBudget(value: unknown): value is RetryBudget {
  return typeof (value as Partial<RetryBudget> | undefined)?.tryRetry === 'function';
}

function build(options: RoutingChannelOptions): RoutingChannel {
  checkOptions(undefined, options, ROUTING_CHANNEL_KEYS, '', false);
  checkOptions(undefined, options.protection, ROUTING_PROTECTION_KEYS, 'protection');
  checkOptions(undefined, options.health, ROUTING_HEALTH_KEYS, 'health');
  const isSafePath = compileSelector('idempotent', options.idempotent);
  const clientView: RouteView = {
    ...(options.attemptTimeoutMs === undefined
      ? {}
      : { attemptTimeoutMs: options.attemptTimeoutMs }),
    ...(options.protection?.retry === undefined ? {} : { retry: options.protection.retry }),
    ...(options.hedge === undefined ? {} : { hedge: options.hedge }),
    ...(options.circuit === undefined ? {} : { circuit: options.circuit }),
  };
  const table = resolveMethods(
    'createRoutingChannel',
    options.methods,
    GRPC_METHOD_SELECTORS,
    clientView,
  );
  const classify = options.classify ?? createGrpcStatusClassifier();
  const clock = options.clock ?? systemClock;
  const propagate = resolvePropagate(options.propagate);
  const h = options.health ?? {};
  // A registry of the user's is consulted as given; the channel's own only records.
  const registry = h.registry ?? createHealthRegistry({ clock, failureThreshold: RECORD_ONLY });
  const targets = buildTargets(options.targets);
  const shared = {
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
    ...(options.random === undefined ? {} : { random: options.random }),
    // Both routers report events; a target's circuit (shared by them) is reported once.
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
  };
  let client: RoutingStack;
  const stacks = new Map<MethodEntry<RouteView>, RoutingStack>();
  let checker: HealthChecker | undefined;
  /** A failure a router of `stack` did not see (a stream broken after commit): the registry and its circuit. */
  const targetFailed = (stack: RoutingStack, id: string): void => {
    registry.failure(id);
    stack.safe.circuit(id)?.onFailure();
  };
  // A failing probe counts toward the target's circuit in every stack; a passing one never
  // closes it (one real call does).
  const probeRecorder: HealthRecorder = {
    success: (id, ms, o) => registry.success(id, ms, o),
    failure: (id) => {
      registry.failure(id);
      for (const stack of [client, ...stacks.values()]) stack.safe.circuit(id)?.onFailure();
    },
  };
  try {
    const providers = targets.map((t, i) => ({
      id: t.id,
      resource: t,
      ...(options.targets[i]?.protection === undefined
        ? {}
        : { protection: options.targets[i]?.protection as RoutingProtection }),
    }));
    const selectionType =
      typeof options.selection === 'string' ? options.selection : options.selection?.type;
    /** The routers of the client's options or of one entry: each its own circuit per target. */
    const stackOf = (
      view: RouteView,
      isSafe: (path: string) => boolean,
      extra: { budget?: RetryBudget | RetryBudgetOptions | false; telemetry?: Telemetry },
    ): RoutingStack => {
      const circuit = circuitOf(view.circuit);
      const base = {
        providers,
        health: { registry },
        classify: routingErrorPolicy,
        // Each target's breaker is built by the router from the shared options.
        protection: {
          ...(view.retry === undefined ? {} : { retry: view.retry }),
          ...(circuit === undefined ? {} : { circuit }),
        },
        ...(options.panic === undefined ? {} : { panic: options.panic }),
        // The routed call inherits from the inbound call (its deadline, attempts' headers); its routers do not.
        propagate: false as const,
        ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
        ...shared,
      };
      const safe = optionPath(asTargets, () =>
        createRouter({
          ...base,
          selection: options.selection ?? ADAPTER_SELECTION,
          ...(view.hedge === undefined ? {} : { hedge: view.hedge }),
          ...(extra.budget === undefined ? {} : { budget: extra.budget }),
          ...(extra.telemetry === undefined ? {} : { telemetry: extra.telemetry }),
        }),
      );
      const hedged = view.hedge !== undefined && view.hedge !== false;
      const parallel = hedged || selectionType === 'race';
      // Calls that must not be repeated get a router without hedging or racing (same registry,
      // same breakers: a target has one circuit per stack).
      const pinned = parallel
        ? createRouter({
            ...base,
            providers: providers.map((p) => ({
              ...p,
              protection: { ...p.protection, circuit: safe.circuit(p.id) ?? false },
            })),
            selection:
              selectionType === 'race'
                ? ADAPTER_SELECTION
                : (options.selection ?? ADAPTER_SELECTION),
            // Each call reported once (by the router that runs it); targets and circuits once, above.
            ...(options.telemetry === undefined
              ? {}
              : { telemetry: callsOnlyTelemetry(options.telemetry) }),
          })
        : safe;
      shareLimiters(pinned, safe);
      return {
        safe,
        pinned,
        timeoutMs: durationOf('timeoutMs', view.timeoutMs),
        perAttemptTimeoutMs: durationOf('attemptTimeoutMs', view.attemptTimeoutMs),
        isSafe,
      };
    };
    client = stackOf(clientView, isSafePath, {
      ...(options.budget === undefined ? {} : { budget: options.budget }),
      ...(options.telemetry === undefined ? {} : { telemetry: options.telemetry }),
    });
    // Every method shares the client's budget (one, created once) and adaptive limits; the
    // entries' calls are reported, their targets and circuits by the client's routers only.
    const budget =
      options.budget === undefined || options.budget === false || isBudget(options.budget)
        ? options.budget
        : createRetryBudget(options.budget);
    for (const entry of table.entries) {
      const own = entry.idempotent;
      const stack = optionPath(entry.path, () =>
        stackOf(entry.options, own === undefined ? isSafePath : () => own, {
          ...(budget === undefined ? {} : { budget }),
          ...(options.telemetry === undefined
            ? {}
            : { telemetry: callsOnlyTelemetry(options.telemetry) }),
        }),
      );
      shareLimiters(stack.safe, client.safe);
      shareLimiters(stack.pinned, client.safe);
      stacks.set(entry, stack);
    }
    if (h.probe !== undefined && h.probe !== 'none') {
      const probe = h.probe;
      checker = optionPath('health', () =>
        createHealthChecker<string>({
          registry: probeRecorder,
          targets: targets.map((t) => ({ name: t.id, target: t.address })),
          probe,
          intervalMs: h.intervalMs ?? 5_000,
          timeoutMs: h.timeoutMs ?? 2_000,
          // A passing probe does not close an open circuit: one real recovery call does.
          keepStreak: true,
          clock,
        }),
      );
    }
  } catch (error) {
    for (const t of targets) if (t.owned) t.channel.close();
    throw error;
  }

  const safeCache = new Map<string, boolean>();
  const stackCache = new Map<string, RoutingStack>();
  let calls = 0;
  let closed = false;
  const clientSafe = client.isSafe;
  client = {
    ...client,
    isSafe(path) {
      let value = safeCache.get(path);
      if (value === undefined) {
        value = clientSafe(path);
        safeCache.set(path, value);
      }
      return value;
    },
  };
  const state: RoutingState = {
    stackFor(path) {
      let stack = stackCache.get(path);
      if (stack === undefined) {
        const entry = table.entryFor(path);
        stack = (entry && stacks.get(entry)) ?? client;
        stackCache.set(path, stack);
      }
      return stack;
    },
    targetFailed,
    classify,
    clock,
    propagate,
    nextCallNumber: () => ++calls,
    get closed() {
      return closed;
    },
  };
  const channels = targets.map((t) => t.channel);
  const routers = [...new Set([client, ...stacks.values()].flatMap((k) => [k.safe, k.pinned]))];
  const name = `breakwater-routing:${targets.map((t) => t.id).join(',')}`;
  // The health service's word: a passing probe lets the target's recovery call go now instead
  // of after its circuit's open duration (a passing probe still does not close the circuit:
  // that call does); a NOT_SERVING it pushed opens the circuit at once.
  checker?.onProbeResult((e) => {
    if (!e.healthy && !e.reported) return;
    for (const r of routers) r.signalServing(e.provider, e.healthy);
  });
  for (const t of targets) {
    // The transport's word: a channel in TRANSIENT_FAILURE is tried after every other target,
    // and back to READY its recovery call goes now. Only the channels it created are kept
    // connected; a channel given is left to its owner.
    watchReachable(
      t.channel,
      (ready) => {
        for (const r of routers) r.signalReachable(t.id, ready);
      },
      () => closed,
      t.owned,
    );
  }

  const routingChannel: ChannelInterface & RoutingChannelApi = {
    targetIds: Object.freeze(targets.map((t) => t.id)),
    health: registry,
    circuit: (targetId, method) =>
      (method === undefined ? client : state.stackFor(method)).safe.circuit(targetId),
    checkHealth: () => checker?.checkNow() ?? Promise.resolve([]),
    onSelected: eachRouter(routers, (r) => r.onSelected),
    onSkipped: eachRouter(routers, (r) => r.onSkipped),
    onFailed: eachRouter(routers, (r) => r.onFailed),
    onHedged: eachRouter(routers, (r) => r.onHedged),
    onRecovered: eachRouter(routers, (r) => r.onRecovered),
    createCall(method, deadline, host, parentCall, propagateFlags) {
      if (closed) throw new Error('Channel has been shut down');
      return new RoutedCall(state, method, deadline, host, parentCall, propagateFlags);
    },
    close() {
      if (closed) return;
      closed = true;
      checker?.stop();
      for (const r of routers) r.stop();
      for (const t of targets) if (t.owned) t.channel.close();
    },
    getTarget: () => name,
    getConnectivityState: (tryToConnect) =>
      closed ? connectivityState.SHUTDOWN : combinedState(channels, tryToConnect),
    watchConnectivityState: (current, deadline, callback) =>
      watchCombinedState(channels, current, deadline, callback),
    getChannelzRef: () => (channels[0] as ChannelInterface).getChannelzRef(),
  };
  // grpc-js's Channel class only adds a private field to the interface; nothing outside grpc-js reads it.
  return routingChannel as RoutingChannel;
}
