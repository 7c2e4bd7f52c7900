import { parseDuration } from '../internal/duration.js';
import {
  checkFunction,
  checkNumber,
  checkOneOf,
  checkOptions,
  describeValue,
  optionalNumber,
  optionRangeError,
  optionTypeError,
} from '../internal/validate.js';
import type { AdaptiveThrottle } from '../limit/adaptive-throttle.js';
import type { ErrorPolicy } from '../retry/verdict.js';
import { type Clock, systemClock } from '../time/clock.js';
import { type RandomSource, systemRandom } from '../time/random.js';
import type { Sleep } from '../time/sleep.js';
import {
  PROTECT_BACKOFF_KEYS,
  PROTECT_CIRCUIT_KEYS,
  PROTECT_KEYS,
  type ProtectOptions,
  type ProtectRetryBudget,
} from './types.js';

/** Validated backoff settings. @internal */
export interface BackoffConfig {
  exponential: boolean;
  delayMs: number;
  jitter: number;
  maxDelayMs: number;
}

/** {@link ProtectOptions} validated and defaulted. @internal */
export interface ProtectConfig {
  attempts: number;
  backoff: BackoffConfig | undefined;
  /** `-1` when there is no timeout. */
  timeoutMs: number;
  waitOnTimeout: boolean;
  concurrency: number;
  maxQueue: number;
  circuit: { threshold: number; cooldownMs: number } | undefined;
  classify: ErrorPolicy | undefined;
  budget: ProtectRetryBudget | undefined;
  throttle: AdaptiveThrottle | undefined;
  name: string | undefined;
  clock: Clock;
  /** `undefined` means the host timer (the fast path). */
  sleep: Sleep | undefined;
  random: RandomSource;
}

function backoffConfig(value: ProtectOptions['backoff']): BackoffConfig | undefined {
  if (value === undefined) return undefined;
  checkOptions('protect', value, PROTECT_BACKOFF_KEYS, 'backoff', false);
  const type = checkOneOf('backoff.type', value.type, ['exponential', 'fixed'] as const);
  if (value.delay === undefined)
    throw optionTypeError('backoff.delay', 'is required, got undefined');
  return {
    exponential: type === 'exponential',
    delayMs: parseDuration('backoff.delay', value.delay),
    jitter: optionalNumber('backoff.jitter', value.jitter, 0, { min: 0, max: 1 }),
    maxDelayMs:
      value.maxDelay === undefined
        ? Number.POSITIVE_INFINITY
        : parseDuration('backoff.maxDelay', value.maxDelay),
  };
}

function circuitConfig(value: ProtectOptions['circuit']): ProtectConfig['circuit'] {
  if (value === undefined || value === false) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw optionTypeError(
      'circuit',
      `must be { threshold, cooldown } or false, got ${describeValue(value)}`,
    );
  }
  checkOptions('protect', value, PROTECT_CIRCUIT_KEYS, 'circuit', false);
  if (value.threshold === undefined) {
    throw optionTypeError('circuit.threshold', 'is required, got undefined');
  }
  if (value.cooldown === undefined) {
    throw optionTypeError('circuit.cooldown', 'is required, got undefined');
  }
  return {
    threshold: checkNumber('circuit.threshold', value.threshold, { above: 0, integer: true }),
    cooldownMs: parseDuration('circuit.cooldown', value.cooldown),
  };
}

function budgetConfig(value: unknown): ProtectRetryBudget | undefined {
  if (value === undefined) return undefined;
  const b = value as Partial<ProtectRetryBudget> | null;
  if (
    typeof b !== 'object' ||
    b === null ||
    typeof b.recordRequest !== 'function' ||
    typeof b.tryRetry !== 'function'
  ) {
    throw optionTypeError(
      'budget',
      `must have recordRequest() and tryRetry() (see createRetryBudget), got ${describeValue(value)}`,
    );
  }
  return b as ProtectRetryBudget;
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

/** Validates `options`; invalid values throw `TypeError`/`RangeError` naming the option. @internal */
export function resolveProtectOptions(options: ProtectOptions | undefined): ProtectConfig {
  checkOptions('protect', options, PROTECT_KEYS);
  const o = options ?? {};
  let timeoutMs = -1;
  if (o.timeout !== undefined) {
    timeoutMs = parseDuration('timeout', o.timeout);
    if (timeoutMs <= 0)
      throw optionRangeError('timeout', `must be > 0 ms, got ${describeValue(o.timeout)}`);
  }
  const timeoutMode = o.timeoutMode ?? 'immediate';
  checkOneOf('timeoutMode', timeoutMode, ['immediate', 'wait'] as const);
  checkFunction('classify', o.classify);
  checkFunction('clock', o.clock);
  checkFunction('sleep', o.sleep);
  checkFunction('random', o.random);
  if (o.name !== undefined && typeof o.name !== 'string') {
    throw optionTypeError('name', `must be a string, got ${describeValue(o.name)}`);
  }
  return {
    attempts: optionalNumber('attempts', o.attempts, 1, { min: 1, integer: true }),
    backoff: backoffConfig(o.backoff),
    timeoutMs,
    waitOnTimeout: timeoutMode === 'wait',
    concurrency: optionalNumber('concurrency', o.concurrency, Number.POSITIVE_INFINITY, {
      min: 1,
      integer: true,
      allowInfinity: true,
    }),
    maxQueue: optionalNumber('maxQueue', o.maxQueue, 0, {
      min: 0,
      integer: true,
      allowInfinity: true,
    }),
    circuit: circuitConfig(o.circuit),
    classify: o.classify,
    budget: budgetConfig(o.budget),
    throttle: throttleConfig(o.throttle),
    name: o.name,
    clock: o.clock ?? systemClock,
    sleep: o.sleep,
    random: o.random ?? systemRandom,
  };
}
