import { abortError } from '../internal/abort.js';
import {
  checkFunction,
  checkNumber,
  checkOptions,
  keysOf,
  optionalNumber,
  optionPath,
} from '../internal/validate.js';
import { type Clock, systemClock } from '../time/clock.js';
import { type Sleep, systemSleep } from '../time/sleep.js';
import { describeFailure, type HealthVerdict, type ProbeContext } from './probe.js';

/**
 * A metric-driven health rule. Call it directly (`await rule()`) or use it as a
 * `Probe`: the target is handed to the sample functions, the signal cuts
 * a two-sample wait short (the rule then rejects with the abort reason).
 */
export type ReadinessRule<T = unknown> = (
  target?: T,
  ctx?: Partial<ProbeContext>,
) => Promise<HealthVerdict>;

/** Reads one number (a counter, a gauge); gets the probe's target when used as a probe. */
export type ReadinessSample<T = unknown> = (target?: T) => number | PromiseLike<number>;

/** Options shared by the rules that take two samples `intervalMs` apart. */
export interface TwoSampleOptions<T = unknown> {
  /** Reads the value. */
  sample: ReadinessSample<T>;
  /** Time between the two samples, in ms. Defaults to 1000 ms. */
  intervalMs?: number;
  /** Name used in the reason text. Defaults to `'counter'` / `'value'`. */
  name?: string;
  /** Waits between the samples. Defaults to `systemSleep`. */
  sleep?: Sleep;
}

/** Keys of {@link TwoSampleOptions}. @internal */
export const TWO_SAMPLE_KEYS = keysOf<TwoSampleOptions>()([
  'sample',
  'intervalMs',
  'name',
  'sleep',
]);

const COUNTER_PROGRESS_KEYS = { ...TWO_SAMPLE_KEYS, initial: true } as const;

/** Options of {@link belowLimit}. */
export interface BelowLimitOptions<T = unknown> {
  /** Reads the value. */
  sample: ReadinessSample<T>;
  /** Healthy while the value is strictly below this. */
  limit: number;
  /** Name used in the reason text. Defaults to `'value'`. */
  name?: string;
}

/** Keys of {@link BelowLimitOptions}. @internal */
export const BELOW_LIMIT_KEYS = keysOf<BelowLimitOptions>()(['sample', 'limit', 'name']);

/** Options of {@link ratioBelow}. */
export interface RatioBelowOptions<T = unknown> {
  /** Reads the numerator (e.g. dropped events). */
  numerator: ReadinessSample<T>;
  /** Reads the denominator (e.g. ingested events); 0 is treated as 1. */
  denominator: ReadinessSample<T>;
  /** Healthy while the ratio is strictly below this. */
  limit: number;
  /** Name used in the reason text. Defaults to `'ratio'`. */
  name?: string;
}

/** Keys of {@link RatioBelowOptions}. @internal */
export const RATIO_BELOW_KEYS = keysOf<RatioBelowOptions>()([
  'numerator',
  'denominator',
  'limit',
  'name',
]);

/** Options of {@link startupGrace}. */
export interface StartupGraceOptions<T = unknown> {
  /** How long after `startedAt` (in ms) the target counts as healthy whatever else says. */
  graceMs: number;
  /** Start of the grace period (clock ms). Defaults to the clock at creation. */
  startedAt?: number;
  /** Judges the target once the grace period is over. Defaults to none (then unhealthy). */
  rule?: ReadinessRule<T>;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
}

/** Keys of {@link StartupGraceOptions}. @internal */
export const STARTUP_GRACE_KEYS = keysOf<StartupGraceOptions>()([
  'graceMs',
  'startedAt',
  'rule',
  'clock',
]);

/** Reads a sample, or explains why it could not. */
async function read<T>(sample: ReadinessSample<T>, target: T | undefined, name: string) {
  try {
    return { value: await sample(target) };
  } catch (error) {
    return { failure: `${name} could not be read: ${describeFailure(error)}` };
  }
}

function checkSample(where: string, sample: unknown): void {
  checkFunction(where, sample, false);
}

/** Takes two samples `intervalMs` apart and lets `judge` compare them. */
function twoSamples<T>(
  rule: string,
  options: TwoSampleOptions<T>,
  defaultName: string,
  judge: (first: number, second: number, name: string, ms: number) => HealthVerdict,
): ReadinessRule<T> {
  const keys = rule === 'counterProgress' ? COUNTER_PROGRESS_KEYS : TWO_SAMPLE_KEYS;
  const ms = optionPath(
    '',
    () => {
      checkOptions(rule, options, keys, '', false);
      checkSample('sample', options.sample);
      checkFunction('sleep', options.sleep);
      return optionalNumber('intervalMs', options.intervalMs, 1000, { min: 0 });
    },
    rule,
  );
  const { sample, name = defaultName, sleep = systemSleep } = options;
  return async (target, ctx) => {
    const signal = ctx?.signal;
    const first = await read(sample, target, name);
    if (first.failure !== undefined) return { healthy: false, reason: first.failure };
    await sleep(ms, signal);
    if (signal?.aborted) throw abortError(signal);
    const second = await read(sample, target, name);
    if (second.failure !== undefined) return { healthy: false, reason: second.failure };
    return judge(first.value, second.value, name, ms);
  };
}

/**
 * Healthy when a counter increased between two samples `intervalMs` apart, or
 * has never moved from `initial` (nothing to deliver yet is not a fault).
 * @example counterProgress({ sample: () => metrics.get('events.delivered'), intervalMs: 50 })
 */
export function counterProgress<T = unknown>(
  options: TwoSampleOptions<T> & {
    /** The counter's starting value; staying there is healthy. Defaults to 0. */
    initial?: number;
  },
): ReadinessRule<T> {
  const initial = options?.initial ?? 0;
  return twoSamples('counterProgress', options, 'counter', (a, b, name, ms) => {
    if (b > a) return { healthy: true, reason: `${name} moved from ${a} to ${b} in ${ms} ms` };
    if (a === initial && b === initial) {
      return { healthy: true, reason: `${name} has not moved from ${initial} yet` };
    }
    return { healthy: false, reason: `${name} made no progress in ${ms} ms (stuck at ${b})` };
  });
}

/**
 * Healthy when a value is the same in two samples `intervalMs` apart (e.g. a
 * drop counter that must not move).
 * @example sampleUnchanged({ sample: () => metrics.get('events.dropped'), intervalMs: 100, name: 'drops' })
 */
export function sampleUnchanged<T = unknown>(options: TwoSampleOptions<T>): ReadinessRule<T> {
  return twoSamples('sampleUnchanged', options, 'value', (a, b, name, ms) =>
    a === b
      ? { healthy: true, reason: `${name} stayed at ${a} for ${ms} ms` }
      : { healthy: false, reason: `${name} changed from ${a} to ${b} in ${ms} ms` },
  );
}

/**
 * Healthy while a value is strictly below `limit`.
 * @example belowLimit({ sample: () => metrics.get('retry.scheduled'), limit: 5, name: 'retries' })
 */
export function belowLimit<T = unknown>(options: BelowLimitOptions<T>): ReadinessRule<T> {
  const limit = optionPath(
    '',
    () => {
      checkOptions('belowLimit', options, BELOW_LIMIT_KEYS, '', false);
      checkSample('sample', options.sample);
      return checkNumber('limit', options.limit, { allowInfinity: true });
    },
    'belowLimit',
  );
  const { sample, name = 'value' } = options;
  return async (target) => {
    const r = await read(sample, target, name);
    if (r.failure !== undefined) return { healthy: false, reason: r.failure };
    return r.value < limit
      ? { healthy: true, reason: `${name} is ${r.value}, below ${limit}` }
      : { healthy: false, reason: `${name} is ${r.value}, not below ${limit}` };
  };
}

/**
 * Healthy while `numerator / denominator` is strictly below `limit`; a zero
 * denominator counts as 1 (nothing processed yet is not a 100% failure rate).
 * @example ratioBelow({ numerator: dropped, denominator: ingested, limit: 0.05, name: 'drop rate' })
 */
export function ratioBelow<T = unknown>(options: RatioBelowOptions<T>): ReadinessRule<T> {
  const limit = optionPath(
    '',
    () => {
      checkOptions('ratioBelow', options, RATIO_BELOW_KEYS, '', false);
      checkSample('numerator', options.numerator);
      checkSample('denominator', options.denominator);
      return checkNumber('limit', options.limit, { allowInfinity: true });
    },
    'ratioBelow',
  );
  const { numerator, denominator, name = 'ratio' } = options;
  return async (target) => {
    const [n, d] = await Promise.all([
      read(numerator, target, `${name} numerator`),
      read(denominator, target, `${name} denominator`),
    ]);
    if (n.failure !== undefined) return { healthy: false, reason: n.failure };
    if (d.failure !== undefined) return { healthy: false, reason: d.failure };
    const ratio = n.value / (d.value === 0 ? 1 : d.value);
    const shown = `${name} is ${ratio} (${n.value}/${d.value})`;
    return ratio < limit
      ? { healthy: true, reason: `${shown}, below ${limit}` }
      : { healthy: false, reason: `${shown}, not below ${limit}` };
  };
}

/**
 * Healthy during a start-up grace period; afterwards `rule` decides (or, with
 * no rule, the grace having ended is itself unhealthy — combine with `any`).
 * @example startupGrace({ graceMs: 60_000, rule: belowLimit({ sample: lag, limit: 100 }) })
 */
export function startupGrace<T = unknown>(options: StartupGraceOptions<T>): ReadinessRule<T> {
  const graceMs = optionPath(
    '',
    () => {
      checkOptions('startupGrace', options, STARTUP_GRACE_KEYS, '', false);
      checkFunction('rule', options.rule);
      checkFunction('clock', options.clock);
      if (options.startedAt !== undefined) checkNumber('startedAt', options.startedAt);
      return checkNumber('graceMs', options.graceMs, { min: 0 });
    },
    'startupGrace',
  );
  const clock = options.clock ?? systemClock;
  const startedAt = options.startedAt === undefined ? clock() : options.startedAt;
  const { rule } = options;
  return async (target, ctx) => {
    const left = startedAt + graceMs - clock();
    if (left > 0) return { healthy: true, reason: `in start-up grace period (${left} ms left)` };
    if (rule) return rule(target, ctx);
    return { healthy: false, reason: `start-up grace period of ${graceMs} ms is over` };
  };
}
