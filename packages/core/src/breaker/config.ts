import {
  checkKeys,
  checkNumber,
  checkObject,
  checkOneOf,
  checkOptions,
  optionalNumber,
  optionTypeError,
} from '../internal/validate.js';
import {
  type CircuitBreakerConfig,
  COUNT_WINDOW_KEYS,
  type FailureRateWindow,
  SLOW_CALL_KEYS,
  type SlowCallRule,
  TIME_WINDOW_KEYS,
} from './types.js';

/**
 * The settings a breaker runs with when an option is left out: opens after 5
 * consecutive failures, stays open 30 s (never more than 5 min, ten times that,
 * when a `backoffMultiplier` grows it), admits one probe, closes on one success.
 * @example
 * const config = { ...getDefaultCircuitBreakerConfig(), failureThreshold: 3 };
 */
export function getDefaultCircuitBreakerConfig(): CircuitBreakerConfig {
  return {
    failureThreshold: 5,
    openDurationMs: 30_000,
    backoffMultiplier: 1,
    maxOpenDurationMs: defaultMaxOpenDurationMs(30_000),
    halfOpenMaxCalls: 1,
    successThreshold: 1,
  };
}

/** How many times `openDurationMs` the open duration may grow to when `maxOpenDurationMs` is left out. */
const DEFAULT_MAX_OPEN_FACTOR = 10;

/**
 * The cap a breaker uses when `maxOpenDurationMs` is left out: ten times
 * `openDurationMs` (kept finite), so a `backoffMultiplier` can never push the
 * open duration to `Infinity`, where the circuit would never half-open again.
 */
function defaultMaxOpenDurationMs(openDurationMs: number): number {
  return Math.max(
    openDurationMs,
    Math.min(openDurationMs * DEFAULT_MAX_OPEN_FACTOR, Number.MAX_SAFE_INTEGER),
  );
}

const RATE = { above: 0, max: 1 } as const;

function validateWindow(value: unknown): FailureRateWindow {
  checkObject('window', value, false);
  const w = value as Record<string, unknown>;
  const type = checkOneOf('window.type', w.type, ['count', 'time'] as const);
  checkKeys(undefined, w, type === 'count' ? COUNT_WINDOW_KEYS : TIME_WINDOW_KEYS, 'window');
  const failureRateThreshold = checkNumber(
    'window.failureRateThreshold',
    w.failureRateThreshold,
    RATE,
  );
  if (type === 'count') {
    const size = checkNumber('window.size', w.size, { integer: true, above: 0 });
    const minimumCalls = optionalNumber('window.minimumCalls', w.minimumCalls, size, {
      integer: true,
      min: 1,
      // A minimum above the window size could never be reached: the rule would be dead.
      max: size,
    });
    return { type, size, minimumCalls, failureRateThreshold };
  }
  const sizeMs = checkNumber('window.sizeMs', w.sizeMs, { above: 0 });
  const minimumCalls = optionalNumber('window.minimumCalls', w.minimumCalls, 1, {
    integer: true,
    min: 1,
  });
  return { type, sizeMs, minimumCalls, failureRateThreshold };
}

function validateSlowCall(value: unknown): SlowCallRule {
  checkOptions(undefined, value, SLOW_CALL_KEYS, 'slowCall', false);
  const s = value as Record<string, unknown>;
  return {
    durationMs: checkNumber('slowCall.durationMs', s.durationMs, { min: 0 }),
    rateThreshold: checkNumber('slowCall.rateThreshold', s.rateThreshold, RATE),
  };
}

/**
 * Checks `options` and fills in the defaults of {@link getDefaultCircuitBreakerConfig}.
 * Throws `TypeError` (wrong type) or `RangeError` (out of range) naming the
 * option and its value. Keys that are not config fields are ignored.
 */
export function validateCircuitBreakerConfig(
  options: Partial<CircuitBreakerConfig> = {},
): CircuitBreakerConfig {
  checkObject('', options, false);
  const d = getDefaultCircuitBreakerConfig();
  const config: CircuitBreakerConfig = {
    // Infinity turns the consecutive rule off, leaving only the failure-rate window.
    failureThreshold: optionalNumber(
      'failureThreshold',
      options.failureThreshold,
      d.failureThreshold,
      {
        integer: true,
        above: 0,
        allowInfinity: true,
      },
    ),
    openDurationMs: optionalNumber('openDurationMs', options.openDurationMs, d.openDurationMs, {
      min: 0,
    }),
    backoffMultiplier: optionalNumber(
      'backoffMultiplier',
      options.backoffMultiplier,
      d.backoffMultiplier,
      {
        min: 1,
      },
    ),
    maxOpenDurationMs: d.maxOpenDurationMs,
    halfOpenMaxCalls: optionalNumber(
      'halfOpenMaxCalls',
      options.halfOpenMaxCalls,
      d.halfOpenMaxCalls,
      {
        integer: true,
        min: 1,
        allowInfinity: true,
      },
    ),
    successThreshold: 1,
  };
  config.maxOpenDurationMs = optionalNumber(
    'maxOpenDurationMs',
    options.maxOpenDurationMs,
    defaultMaxOpenDurationMs(config.openDurationMs),
    { min: config.openDurationMs, allowInfinity: true },
  );
  config.successThreshold = optionalNumber(
    'successThreshold',
    options.successThreshold,
    d.successThreshold,
    {
      integer: true,
      min: 1,
      // More successes than admitted probes could never close the circuit.
      max: config.halfOpenMaxCalls,
    },
  );
  if (options.window !== undefined) config.window = validateWindow(options.window);
  if (options.slowCall !== undefined) {
    config.slowCall = validateSlowCall(options.slowCall);
    if (config.window === undefined) {
      throw optionTypeError(
        'slowCall',
        'needs a window: slow calls only count toward a failure-rate window',
      );
    }
  }
  return config;
}
