import { ScopeLatencies } from '../attempts/attempt-timeout.js';
import { AttemptEngine, MAX_ATTEMPTS } from '../attempts/engine.js';
import { type ResilienceOptions, resolveResilience } from '../attempts/resilience-options.js';
import type { SafeTelemetry, TelemetryTarget } from '../attempts/telemetry.js';
import { createHealthChecker, type HealthChecker } from '../health/checker.js';
import { createHealthRegistry, type HealthRegistry } from '../health/registry.js';
import {
  checkFunction,
  checkNumber,
  checkObject,
  checkOptions,
  describeValue,
  optionalNumber,
  optionPath,
  optionTypeError,
} from '../internal/validate.js';
import { adaptiveLimiterOf } from '../limit/adaptive-limiter.js';
import type { PropagatePlan } from '../propagation/propagate-options.js';
import type { RetryBudget } from '../retry/budget.js';
import type { ErrorPolicy } from '../retry/verdict.js';
import { type Clock, monotonicClock, systemClock } from '../time/clock.js';
import { type RandomSource, systemRandom } from '../time/random.js';
import { type Sleep, systemSleep } from '../time/sleep.js';
import { LatencySample } from './latency-sample.js';
import { ProviderLoad } from './load.js';
import { ROUTE_PROTECTION_KEYS, type RouteProtection, resolveProtection } from './protection.js';
import { createSelection, loadSettings, type SelectionStrategy } from './selection.js';
import {
  ROUTE_HEALTH_KEYS,
  ROUTE_HEDGE_KEYS,
  ROUTE_PANIC_KEYS,
  ROUTE_PROVIDER_KEYS,
  ROUTER_OPTION_KEYS,
  type RouteHedge,
  type RoutePanic,
  type RouterOptions,
} from './types.js';
import type { ProviderRuntime } from './visit.js';

/** Hedging after validation. @internal */
export interface HedgeConfig {
  /** Fixed delay, or -1 when the percentile sample decides. */
  delayMs: number;
  sample: LatencySample | undefined;
}

/** The panic rule after validation. @internal */
export interface PanicConfig {
  /** Providers that must be ejected (a count, from the threshold fraction). */
  readonly ejected: number;
  readonly ratio: number;
}

function checkPanic(value: RoutePanic | false | undefined, count: number): PanicConfig | undefined {
  if (value === false) return undefined;
  checkOptions('createRouter', value, ROUTE_PANIC_KEYS, 'panic');
  const rate = { above: 0, max: 1 } as const;
  const threshold = optionalNumber('panic.threshold', value?.threshold, 1, rate);
  const ratio = optionalNumber('panic.ratio', value?.ratio, 0.1, rate);
  return { ejected: Math.max(1, Math.ceil(threshold * count - 1e-9)), ratio };
}

/** {@link RouterOptions} validated and built into runtime pieces. @internal */
export interface RouterConfig<R> {
  providers: ProviderRuntime<R>[];
  selection: SelectionStrategy;
  health: HealthRegistry;
  /** Consult `health.isOpen` before dispatch (only when the user configured health). */
  consultHealth: boolean;
  checker: HealthChecker | undefined;
  hedge: HedgeConfig | undefined;
  /** The panic rule, or `undefined` when off. */
  panic: PanicConfig | undefined;
  /**
   * The engine of the router's own decisions: failover (charged to the
   * budget) and hedging (its `attempts` and timer).
   */
  engine: AttemptEngine;
  /** The bulkhead, or `undefined` when requests are not limited (or each provider has an adaptive limit). */
  concurrency: { readonly limit: number; readonly maxQueue: number } | undefined;
  classify: ErrorPolicy | undefined;
  budget: RetryBudget | undefined;
  clock: Clock;
  sleep: Sleep;
  random: RandomSource;
  /** The `telemetry` option, guarded; `undefined` for none. */
  telemetry: SafeTelemetry | undefined;
  /** Inheritance from the inbound call, or `undefined` when `propagate: false`. */
  propagate: PropagatePlan | undefined;
}

/** What telemetry hears the router's requests as. @internal */
export const ROUTER_TARGET: TelemetryTarget = Object.freeze({ name: 'router' });

function checkProviders<R>(options: RouterOptions<R>): void {
  const list: unknown = options.providers;
  if (!Array.isArray(list) || list.length === 0) {
    throw optionTypeError('providers', `must be a non-empty array, got ${describeValue(list)}`);
  }
  const seen = new Set<string>();
  list.forEach((p: unknown, i) => {
    checkOptions('createRouter', p, ROUTE_PROVIDER_KEYS, `providers[${i}]`, false);
    const id = (p as { id?: unknown }).id;
    if (typeof id !== 'string' || id.length === 0) {
      throw optionTypeError(
        `providers[${i}].id`,
        `must be a non-empty string, got ${describeValue(id)}`,
      );
    }
    if (seen.has(id)) {
      throw optionTypeError(
        `providers[${i}].id`,
        `${JSON.stringify(id)} is a duplicate provider id`,
      );
    }
    seen.add(id);
  });
}

function checkHedge(
  value: RouteHedge | false | undefined,
  race: boolean,
): { config: HedgeConfig; attempts: number } | undefined {
  if (value === undefined || value === false) return undefined;
  checkOptions('createRouter', value, ROUTE_HEDGE_KEYS, 'hedge', false);
  if (race)
    throw new TypeError("hedge cannot be combined with selection 'race' (it runs all at once)");
  const attempts = optionalNumber('hedge.attempts', value.attempts, 2, {
    min: 2,
    max: MAX_ATTEMPTS,
    integer: true,
  });
  const hasDelay = value.delayMs !== undefined;
  if (hasDelay === (value.percentile !== undefined)) {
    throw optionTypeError(
      'hedge',
      `needs exactly one of delayMs or percentile, got ${describeValue(value)}`,
    );
  }
  if (hasDelay) {
    const delayMs = checkNumber('hedge.delayMs', value.delayMs, { min: 0 });
    if (value.windowMs !== undefined) {
      throw optionTypeError(
        'hedge.windowMs',
        `applies to percentile hedging only, got ${describeValue(value)}`,
      );
    }
    return { config: { delayMs, sample: undefined }, attempts };
  }
  const percentile = checkNumber('hedge.percentile', value.percentile, { above: 0, max: 99.99 });
  const windowMs = optionalNumber('hedge.windowMs', value.windowMs, 30_000, {
    above: 0,
    allowInfinity: true,
  });
  return { config: { delayMs: -1, sample: new LatencySample(percentile, windowMs) }, attempts };
}

/** Validates `options` (throwing `TypeError`/`RangeError` naming the problem) and builds the pieces. @internal */
export function resolveRouterOptions<R>(options: RouterOptions<R>): RouterConfig<R> {
  // Every message names the factory: `createRouter: hedge.delayMs must be >= 0, got -1`.
  return optionPath('', () => resolve(options), 'createRouter');
}

function resolve<R>(options: RouterOptions<R>): RouterConfig<R> {
  checkOptions('createRouter', options, ROUTER_OPTION_KEYS, '', false);
  checkProviders(options);
  checkOptions('createRouter', options.protection, ROUTE_PROTECTION_KEYS, 'protection');
  checkFunction('classify', options.classify);
  // The router-level parts have ResilienceOptions' shapes and rules: built the same way.
  const router: ResilienceOptions = {};
  if (options.budget !== undefined) router.budget = options.budget;
  if (options.concurrency !== undefined) router.concurrency = options.concurrency;
  if (options.clock !== undefined) router.clock = options.clock;
  if (options.sleep !== undefined) router.sleep = options.sleep;
  if (options.random !== undefined) router.random = options.random;
  if (options.telemetry !== undefined) router.telemetry = options.telemetry;
  if (options.onEvent !== undefined) router.onEvent = options.onEvent;
  if (options.propagate !== undefined) router.propagate = options.propagate;
  const shared = resolveResilience('createRouter', '', router, false);
  const clock = options.clock ?? systemClock;
  const random = options.random ?? systemRandom;
  const env = {
    budget: shared.budget,
    clock: options.clock,
    sleep: options.sleep,
    random: options.random,
    latencies: new ScopeLatencies(),
  };
  const sharedProtection = options.protection;
  if (sharedProtection !== undefined) {
    const c = sharedProtection.circuit;
    if (typeof c === 'object' && c !== null && 'tryAcquire' in c) {
      throw optionTypeError(
        'protection.circuit',
        'is a CircuitBreaker, which every provider would share: give createCircuitBreaker options (each provider gets its own breaker), or a breaker per provider in providers[i].protection',
        'createRouter',
      );
    }
    // Alone first, so an error in a shared setting is reported at `protection.*`.
    resolveProtection('protection', '', sharedProtection, undefined, env);
  }

  const load = loadSettings(options.selection);
  // Latency samples need sub-millisecond resolution: without an injected clock they read the monotonic one.
  const samples = options.clock ?? monotonicClock;
  const providers: ProviderRuntime<R>[] = options.providers.map((p, index) => {
    const config = resolveProtection(
      `providers[${index}].protection`,
      p.id,
      sharedProtection as RouteProtection | undefined,
      p.protection,
      env,
    );
    return {
      index,
      id: p.id,
      resource: p.resource,
      config,
      breaker: config.circuit,
      limiter: shared.adaptive && adaptiveLimiterOf(shared.adaptive, samples),
      load: new ProviderLoad(load),
      healthProbing: false,
      unreachable: false,
      notServing: false,
      slowLossesInARow: 0,
      answeredAt: Number.NEGATIVE_INFINITY,
    };
  });
  const ids = providers.map((p) => p.id);

  const h = options.health;
  checkOptions('createRouter', h, ROUTE_HEALTH_KEYS, 'health');
  if (h?.registry !== undefined) {
    checkObject('health.registry', h.registry, false);
    for (const m of ['success', 'failure', 'latency', 'isOpen', 'circuitState'] as const) {
      checkFunction(`health.registry.${m}`, h.registry[m], false);
    }
  }
  const health: HealthRegistry =
    h?.registry ??
    optionPath('health', () =>
      createHealthRegistry({
        clock,
        ...(h?.failureThreshold === undefined ? {} : { failureThreshold: h.failureThreshold }),
        ...(h?.openDurationMs === undefined ? {} : { openDurationMs: h.openDurationMs }),
      }),
    );
  const view = {
    count: providers.length,
    latency: (i: number) => health.latency(ids[i] as string),
    load: (i: number) => (providers[i] as ProviderRuntime<R>).load,
    clock,
    healthy: (i: number) => {
      const p = providers[i] as ProviderRuntime<R>;
      return p.breaker?.state !== 'open' && !(h !== undefined && health.isOpen(p.id));
    },
  };
  shared.telemetry?.providers(ids, view.healthy, ROUTER_TARGET);
  const selection = createSelection(options.selection, ids, view, random);
  const hedge = checkHedge(options.hedge, selection.type === 'race');
  const panic = checkPanic(options.panic, providers.length);
  const sleep = options.sleep ?? systemSleep;
  const engine = new AttemptEngine({
    // Without hedging, attempts bound nothing here: failover is bounded by the providers.
    attempts: hedge?.attempts ?? MAX_ATTEMPTS,
    // A percentile hedge's delay is read from the sample each time the timer is armed.
    hedgeDelayMs: hedge === undefined ? undefined : Math.max(hedge.config.delayMs, 0),
    budget: shared.budget,
    clock,
    sleep,
  });
  const config = {
    providers,
    selection,
    health,
    consultHealth: h !== undefined,
    hedge: hedge?.config,
    panic,
    engine,
    concurrency: shared.concurrency,
    classify: options.classify,
    budget: shared.budget,
    clock,
    sleep,
    random,
    telemetry: shared.telemetry,
    propagate: shared.propagate,
  };
  for (const p of providers) {
    if (p.breaker !== undefined)
      shared.telemetry?.circuit(p.breaker, Object.freeze({ name: p.id }));
    if (p.limiter !== undefined) {
      shared.telemetry?.concurrencyLimit(
        p.limiter,
        Object.freeze({ name: ROUTER_TARGET.name, provider: p.id }),
      );
    }
  }
  // Last, so that invalid options never leave a background checker running.
  const probe = h?.probe;
  const checker =
    probe === undefined
      ? undefined
      : optionPath('health', () =>
          createHealthChecker<R>({
            registry: health,
            targets: providers.map((p) => ({ name: p.id, target: p.resource })),
            probe,
            intervalMs: h?.intervalMs ?? 10_000,
            timeoutMs: h?.timeoutMs ?? 2_000,
            clock,
            random,
            // Without an injected sleep the checker keeps its own unref'd timer.
            ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
          }),
        );

  // The router hears the checker's passing probes (a health signal: `RouterCore.signalHealthy`).
  return { ...config, checker };
}
