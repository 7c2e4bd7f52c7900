import type { AttemptTimeout, ScopeLatencies } from '../attempts/attempt-timeout.js';
import type { AttemptEngine } from '../attempts/engine.js';
import {
  type ResilienceOptions,
  type RetryEvent,
  resolveResilience,
} from '../attempts/resilience-options.js';
import type { CircuitBreaker } from '../breaker/types.js';
import { checkOneOf, checkOptions, keysOf, optionPath } from '../internal/validate.js';
import type { RetryBudget } from '../retry/budget.js';
import type { Clock } from '../time/clock.js';
import type { RandomSource } from '../time/random.js';
import type { Sleep } from '../time/sleep.js';

/**
 * How each provider visit is protected: the per-provider part of
 * `ResilienceOptions` (same names, same rules as `protect`), plus
 * `timeoutMode`.
 */
export interface RouteProtection
  extends Pick<ResilienceOptions, 'timeoutMs' | 'attemptTimeoutMs' | 'retry' | 'circuit'> {
  /**
   * `'immediate'` ends a timed-out attempt at once; `'wait'` waits for the
   * operation to settle first, so attempts on a provider never overlap.
   * Defaults to `'immediate'`.
   */
  timeoutMode?: 'immediate' | 'wait';
}

/** Keys of {@link RouteProtection}. @internal */
export const ROUTE_PROTECTION_KEYS = keysOf<RouteProtection>()([
  'timeoutMs',
  'attemptTimeoutMs',
  'retry',
  'circuit',
  'timeoutMode',
]);

const KEYS = Object.keys(ROUTE_PROTECTION_KEYS) as (keyof RouteProtection)[];

/** A provider's protection, validated and built. @internal */
export interface ProviderProtection {
  /** Engine of the visit's retries, or `undefined` for one attempt per visit. */
  readonly engine: AttemptEngine | undefined;
  /** Attempts per visit, the first included. */
  readonly attempts: number;
  /** Deadline of each attempt in ms; `Infinity` for none. */
  readonly attemptTimeoutMs: number;
  /** Each attempt's deadline, derived per attempt from this provider's latency when `attemptTimeoutMs` was left out. */
  readonly attemptTimeout: AttemptTimeout;
  /** Deadline of the whole visit (its attempts and waits) in ms; `Infinity` for none. */
  readonly timeoutMs: number;
  readonly waitOnTimeout: boolean;
  readonly circuit: CircuitBreaker | undefined;
  readonly onRetry: ((event: RetryEvent) => void) | undefined;
}

/** Router-wide things a provider's protection is built with. @internal */
export interface ProtectionEnv {
  readonly budget: RetryBudget | undefined;
  readonly clock: Clock | undefined;
  readonly sleep: Sleep | undefined;
  readonly random: RandomSource | undefined;
  /** What every provider's derived attempt timeout learns from: a provider with no latency of its own is judged by its siblings'. */
  readonly latencies: ScopeLatencies;
}

/**
 * Merges a provider's protection over the router's and builds it with
 * `resolveResilience` (standard off: what is left out is off). The merge is
 * one level deep on purpose: a nested `retry` or `circuit` object replaces the
 * inherited object whole (a provider never ends up with half of each),
 * `false` turns an inherited part off, and an `undefined` key inherits. A
 * circuit given as options gets one recovery probe per cool-down and the
 * provider's id as its name unless the options say otherwise.
 * @internal
 */
export function resolveProtection(
  where: string,
  id: string,
  shared: RouteProtection | undefined,
  own: RouteProtection | undefined,
  env: ProtectionEnv,
): ProviderProtection {
  checkOptions('createRouter', own, ROUTE_PROTECTION_KEYS, where);
  const merged: Record<string, unknown> = {};
  for (const key of KEYS) {
    const value = own?.[key] !== undefined ? own[key] : shared?.[key];
    if (value !== undefined) merged[key] = value;
  }
  const mode = optionPath(
    where,
    () =>
      checkOneOf('timeoutMode', merged.timeoutMode ?? 'immediate', ['immediate', 'wait'] as const),
    'createRouter',
  );
  delete merged.timeoutMode;
  const circuit = merged.circuit;
  if (typeof circuit === 'object' && circuit !== null && !('tryAcquire' in circuit)) {
    merged.circuit = { halfOpenMaxCalls: 1, name: id, ...circuit };
  }
  if (env.random !== undefined) merged.random = env.random;
  if (env.budget !== undefined) merged.budget = env.budget;
  if (env.clock !== undefined) merged.clock = env.clock;
  if (env.sleep !== undefined) merged.sleep = env.sleep;
  const plan = resolveResilience('createRouter', where, merged as ResilienceOptions, false);
  return {
    engine: plan.retry,
    attempts: plan.retry?.attempts ?? 1,
    attemptTimeoutMs: plan.attemptTimeoutMs,
    attemptTimeout: plan.attemptTimeout.sharing(env.latencies),
    timeoutMs: plan.timeoutMs,
    waitOnTimeout: mode === 'wait',
    circuit: plan.circuit,
    onRetry: plan.onRetry,
  };
}
