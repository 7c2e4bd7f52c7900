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
  type CircuitBreakerSettings,
  COUNT_WINDOW_KEYS,
  type FailureRateWindow,
  SLOW_CALL_KEYS,
  type SlowCallRule,
  TIME_WINDOW_KEYS,
} from './types.js';

/**
 * The standard circuit: what a breaker runs with for every option left out,
 * and `STANDARD_RESILIENCE.circuit` (the one copy of these numbers).
 * - Five failures in a row that keep failing for half a second, at five
 *   moments 100 ms apart, open it: failures that land together (a stalled
 *   event loop firing its deadline timers, a batch delivering its errors
 *   first, one dropped connection) say how calls were ordered, not that the
 *   upstream is down.
 * - Or half the calls of the last 10 s failing (a partial outage), once 100
 *   were seen.
 * - A probe every 200 ms while open, however long the outage (no growth): the
 *   first call after the upstream recovers succeeds within about 200 ms, at a
 *   cost of 5 probes a second; one successful probe closes it.
 * `maxOpenDurationMs` is left out: it follows `openDurationMs` (ten times it),
 * so `{ ...DEFAULT_CIRCUIT_BREAKER_OPTIONS, openDurationMs: 5_000 }` is valid.
 */
export const DEFAULT_CIRCUIT_BREAKER_OPTIONS = Object.freeze({
  failureThreshold: 5,
  failureSpanMs: 500,
  window: Object.freeze({
    type: 'time' as const,
    sizeMs: 10_000,
    minimumCalls: 100,
    failureRateThreshold: 0.5,
  }),
  openDurationMs: 200,
  backoffMultiplier: 1,
  halfOpenMaxCalls: 1,
  successThreshold: 1,
}) satisfies Omit<CircuitBreakerConfig, 'maxOpenDurationMs'>;

/**
 * The settings a breaker runs with when an option is left out
 * ({@link DEFAULT_CIRCUIT_BREAKER_OPTIONS}, the standard circuit): opens after
 * 5 failures in a row spanning 500 ms, or half the calls of the last 10 s
 * failing (once 100 were seen); a probe every 200 ms while open (never more
 * than 2 s, ten times that, when a `backoffMultiplier` grows it); closes on
 * one successful probe. A fresh, mutable object each time.
 * @example
 * const config = { ...getDefaultCircuitBreakerConfig(), failureThreshold: 3 };
 */
export function getDefaultCircuitBreakerConfig(): CircuitBreakerConfig {
  const d = DEFAULT_CIRCUIT_BREAKER_OPTIONS;
  return {
    ...d,
    window: { ...d.window },
    maxOpenDurationMs: defaultMaxOpenDurationMs(d.openDurationMs),
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
 * Checks `options` and fills in the defaults of {@link getDefaultCircuitBreakerConfig}
 * option by option (`{ failureThreshold: 3 }` keeps the window and the 200 ms open
 * duration), except that a `failureThreshold` given without `failureSpanMs` gets no
 * span: three failures in a row open it.
 * Throws `TypeError` (wrong type) or `RangeError` (out of range) naming the
 * option and its value. Keys that are not config fields are ignored.
 */
export function validateCircuitBreakerConfig(
  options: CircuitBreakerSettings = {},
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
    // A threshold the user sets is a count that means what it says: the default span
    // belongs to the default threshold, and comes with it only.
    failureSpanMs: optionalNumber(
      'failureSpanMs',
      options.failureSpanMs,
      options.failureThreshold === undefined ? d.failureSpanMs : 0,
      { min: 0 },
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
  // Left out: the standard window; `false` turns the failure-rate rule off.
  if (options.window === undefined) config.window = { ...DEFAULT_CIRCUIT_BREAKER_OPTIONS.window };
  else if (options.window !== false) config.window = validateWindow(options.window);
  if (options.slowCall !== undefined) {
    config.slowCall = validateSlowCall(options.slowCall);
    if (config.window === undefined) {
      throw optionTypeError(
        'slowCall',
        'needs a window (window: false turns it off): slow calls only count toward a failure-rate window',
      );
    }
  }
  return config;
}
