import { createCircuitBreaker } from '../breaker/circuit-breaker.js';
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
import { resolveProtectOptions } from '../protect/options.js';
import type { ProtectOptions, ProtectRetryBudget } from '../protect/types.js';
import type { ErrorPolicy } from '../retry/verdict.js';
import type { Clock } from '../time/clock.js';
import type { RandomSource } from '../time/random.js';
import { type Sleep, systemSleep } from '../time/sleep.js';
import { LatencySample } from './latency-sample.js';
import { ROUTE_PROTECTION_KEYS, resolveProtection } from './protection.js';
import { createSelection, type SelectionStrategy } from './selection.js';
import {
  ROUTE_HEALTH_KEYS,
  ROUTE_HEDGE_KEYS,
  ROUTE_PROVIDER_KEYS,
  ROUTER_OPTION_KEYS,
  type RouteHedge,
  type RouterOptions,
} from './types.js';
import type { ProviderRuntime } from './visit.js';

/** Hedging after validation. @internal */
export interface HedgeConfig {
  /** Fixed delay, or -1 when the percentile sample decides. */
  delayMs: number;
  maxHedges: number;
  sample: LatencySample | undefined;
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
  concurrency: number;
  maxQueue: number;
  errorPolicy: ErrorPolicy | undefined;
  budget: ProtectRetryBudget | undefined;
  clock: Clock;
  sleep: Sleep;
  random: RandomSource;
}

const ROUTER_KEYS = [
  'concurrency',
  'maxQueue',
  'errorPolicy',
  'budget',
  'clock',
  'sleep',
  'random',
] as const;

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

function checkHedge(value: RouteHedge | undefined, race: boolean): HedgeConfig | undefined {
  if (value === undefined) return undefined;
  checkOptions('createRouter', value, ROUTE_HEDGE_KEYS, 'hedge', false);
  if (race)
    throw new TypeError("hedge cannot be combined with selection 'race' (it runs all at once)");
  const maxHedges = optionalNumber('hedge.maxHedges', value.maxHedges, 1, {
    min: 0,
    integer: true,
  });
  const hasDelay = value.delayMs !== undefined;
  if (hasDelay === (value.percentile !== undefined)) {
    throw optionTypeError(
      'hedge',
      `needs exactly one of delayMs or percentile, got ${describeValue(value)}`,
    );
  }
  if (maxHedges === 0) return undefined;
  if (hasDelay) {
    const delayMs = checkNumber('hedge.delayMs', value.delayMs, { min: 0 });
    if (value.windowMs !== undefined) {
      throw optionTypeError(
        'hedge.windowMs',
        `applies to percentile hedging only, got ${describeValue(value)}`,
      );
    }
    return { delayMs, maxHedges, sample: undefined };
  }
  const percentile = checkNumber('hedge.percentile', value.percentile, { above: 0, max: 99.99 });
  const windowMs = optionalNumber('hedge.windowMs', value.windowMs, 30_000, {
    above: 0,
    allowInfinity: true,
  });
  return { delayMs: -1, maxHedges, sample: new LatencySample(percentile, windowMs) };
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
  if (options.protection !== undefined) {
    // Alone first, so an error in a shared setting is reported at `protection.*`.
    optionPath('protection', () => resolveProtectOptions(options.protection as ProtectOptions));
  }
  // The router-level settings have protect()'s shapes and rules: validate them the same way.
  const router: Record<string, unknown> = {};
  for (const key of ROUTER_KEYS) if (options[key] !== undefined) router[key] = options[key];
  const shared = resolveProtectOptions(router as ProtectOptions);
  const { clock, random } = shared;

  const providers: ProviderRuntime<R>[] = options.providers.map((p, index) => {
    const config = resolveProtection(
      `providers[${index}].protection`,
      options.protection,
      p.protection,
    );
    const breaker =
      config.circuit === undefined
        ? undefined
        : createCircuitBreaker({
            failureThreshold: config.circuit.threshold,
            openDurationMs: config.circuit.cooldownMs,
            // One recovery probe per cool-down; everyone else uses alternatives meanwhile.
            halfOpenMaxCalls: 1,
            clock,
            name: p.id,
          });
    return {
      index,
      id: p.id,
      resource: p.resource,
      config,
      breaker,
      inflight: 0,
      healthProbing: false,
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
        ...(h?.failures === undefined ? {} : { failures: h.failures }),
        ...(h?.reset === undefined ? {} : { reset: h.reset }),
      }),
    );
  const view = {
    count: providers.length,
    latency: (i: number) => health.latency(ids[i] as string),
    inflight: (i: number) => (providers[i] as ProviderRuntime<R>).inflight,
    healthy: (i: number) => {
      const p = providers[i] as ProviderRuntime<R>;
      return p.breaker?.state !== 'open' && !(h !== undefined && health.isOpen(p.id));
    },
  };
  const selection = createSelection(options.selection, ids, view, random);
  const hedge = checkHedge(options.hedge, selection.type === 'race');
  const config = {
    providers,
    selection,
    health,
    consultHealth: h !== undefined,
    hedge,
    concurrency: shared.concurrency,
    maxQueue: shared.maxQueue,
    errorPolicy: shared.errorPolicy,
    budget: shared.budget,
    clock,
    sleep: shared.sleep ?? systemSleep,
    random,
  };
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
            // Without an injected sleep the checker keeps its own unref'd timer.
            ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
          }),
        );

  return { ...config, checker };
}
