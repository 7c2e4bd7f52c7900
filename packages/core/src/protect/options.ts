import type { AttemptTimeout } from '../attempts/attempt-timeout.js';
import type { AttemptEngine } from '../attempts/engine.js';
import {
  type ResilienceOptions,
  type RetryEvent,
  resolveResilience,
} from '../attempts/resilience-options.js';
import type { SafeTelemetry, TelemetryTarget } from '../attempts/telemetry.js';
import type { CircuitBreaker } from '../breaker/types.js';
import {
  checkFunction,
  checkOneOf,
  checkOptions,
  describeValue,
  optionTypeError,
} from '../internal/validate.js';
import type { AdaptiveThrottle } from '../limit/adaptive-throttle.js';
import type { GradientSettings } from '../limit/gradient-limit.js';
import type { TokenBucket } from '../limit/token-bucket.js';
import type { PropagatePlan } from '../propagation/propagate-options.js';
import type { RetryBudget } from '../retry/budget.js';
import type { ErrorPolicy } from '../retry/verdict.js';
import { type Clock, systemClock } from '../time/clock.js';
import type { Sleep } from '../time/sleep.js';
import { PROTECT_KEYS, type ProtectOptions } from './types.js';

/** {@link ProtectOptions} validated and built. @internal */
export interface ProtectConfig {
  /** Engine of the call's retries, or `undefined` for one attempt per call. */
  engine: AttemptEngine | undefined;
  /** Deadline of each attempt in ms; `Infinity` for none. */
  attemptTimeoutMs: number;
  /** Each attempt's deadline, derived per attempt when `attemptTimeoutMs` was left out. */
  attemptTimeout: AttemptTimeout;
  /** Deadline of the whole call (attempts and waits) in ms; `Infinity` for none. */
  timeoutMs: number;
  waitOnTimeout: boolean;
  concurrency: { readonly limit: number; readonly maxQueue: number } | undefined;
  /** `concurrency.adaptive`, validated. */
  adaptive: GradientSettings | undefined;
  circuit: CircuitBreaker | undefined;
  classify: ErrorPolicy | undefined;
  budget: RetryBudget | undefined;
  rateLimit: TokenBucket | undefined;
  throttle: AdaptiveThrottle | undefined;
  onRetry: ((event: RetryEvent) => void) | undefined;
  name: string | undefined;
  telemetry: SafeTelemetry | undefined;
  /** What telemetry hears calls of this runner as. */
  target: TelemetryTarget;
  clock: Clock;
  /** `undefined` means the host timer (the fast path). */
  sleep: Sleep | undefined;
  /** Inheritance from the inbound call, or `undefined` when `propagate: false`. */
  propagate: PropagatePlan | undefined;
}

function throttleConfig(value: unknown): AdaptiveThrottle | undefined {
  if (value === undefined) return undefined;
  const t = value as Partial<AdaptiveThrottle> | null;
  if (
    typeof t !== 'object' ||
    t === null ||
    typeof t.tryAcquire !== 'function' ||
    typeof t.recordAccept !== 'function'
  ) {
    throw optionTypeError(
      'throttle',
      `must be an adaptive throttle (see createAdaptiveThrottle), got ${describeValue(value)}`,
    );
  }
  return t as AdaptiveThrottle;
}

/**
 * Validates `options` and builds the stack: the shared keys go to
 * `resolveResilience` (standard off: what is left out is off), protect's own
 * keys (`classify`, `throttle`, `name`, `timeoutMode`) are checked here.
 * Invalid values throw `TypeError`/`RangeError` naming the full option path.
 * @internal
 */
export function resolveProtectOptions(options: ProtectOptions | undefined): ProtectConfig {
  if (
    typeof options === 'object' &&
    options !== null &&
    (options as { hedge?: unknown }).hedge !== undefined
  ) {
    throw new TypeError(
      'protect: hedge is not supported: hedging races attempts on other providers, which is the router’s job (createRouter({ hedge }))',
    );
  }
  checkOptions('protect', options, PROTECT_KEYS);
  const o = options ?? {};
  const timeoutMode = checkOneOf('timeoutMode', o.timeoutMode ?? 'immediate', [
    'immediate',
    'wait',
  ] as const);
  checkFunction('classify', o.classify);
  if (o.name !== undefined && typeof o.name !== 'string') {
    throw optionTypeError('name', `must be a string, got ${describeValue(o.name)}`);
  }
  const shared: ResilienceOptions = {};
  for (const key of SHARED_KEYS) {
    const value = o[key];
    if (value !== undefined) (shared as Record<string, unknown>)[key] = value;
  }
  const circuit = o.circuit;
  if (
    o.name !== undefined &&
    typeof circuit === 'object' &&
    circuit !== null &&
    !('tryAcquire' in circuit) &&
    circuit.name === undefined
  ) {
    // The runner's name names its circuit's events and errors.
    shared.circuit = { ...circuit, name: o.name };
  }
  const plan = resolveResilience('protect', '', shared, false);
  return {
    engine: plan.retry,
    attemptTimeoutMs: plan.attemptTimeoutMs,
    attemptTimeout: plan.attemptTimeout,
    timeoutMs: plan.timeoutMs,
    waitOnTimeout: timeoutMode === 'wait',
    concurrency: plan.concurrency,
    adaptive: plan.adaptive,
    circuit: plan.circuit,
    classify: o.classify,
    budget: plan.budget,
    rateLimit: plan.rateLimit,
    throttle: throttleConfig(o.throttle),
    onRetry: plan.onRetry,
    name: o.name,
    telemetry: plan.telemetry,
    target: Object.freeze({ name: o.name }),
    clock: o.clock ?? systemClock,
    sleep: o.sleep,
    propagate: plan.propagate,
  };
}

const SHARED_KEYS = [
  'timeoutMs',
  'attemptTimeoutMs',
  'retry',
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
] as const satisfies readonly (keyof ResilienceOptions)[];
