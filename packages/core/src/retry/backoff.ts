import {
  checkFunction,
  checkNumber,
  checkOneOf,
  checkOptions,
  keysOf,
  optionalNumber,
  optionRangeError,
  optionTypeError,
} from '../internal/validate.js';
import { type RandomSource, systemRandom } from '../time/random.js';

/** How the undelayed schedule grows with the attempt number. */
export type BackoffStrategy = 'linear' | 'exponential';

/**
 * How randomness spreads the delays: `additive` adds up to `jitterRatio ×
 * baseDelayMs` on top of the schedule, `full` draws from `[0, schedule)`,
 * `decorrelated` draws from `[baseDelayMs, previous × factor)` (AWS),
 * `proportional` draws from `schedule × [1 − jitterRatio, 1 + jitterRatio)`
 * (gRPC's retry backoff, gRFC A6: ±20 %), `none` waits exactly the schedule.
 */
export type BackoffJitter = 'additive' | 'full' | 'decorrelated' | 'proportional' | 'none';

/** Options of {@link createBackoff}. */
export interface BackoffOptions {
  /** Delay of the first retry (the schedule's unit), in ms, >= 0. Required. */
  baseDelayMs: number;
  /** Schedule growth. Defaults to `'linear'`. Ignored by `decorrelated` jitter. */
  strategy?: BackoffStrategy;
  /** Exponential growth factor (>= 1); the decorrelated multiplier. Defaults to 2 (3 for `decorrelated`). */
  factor?: number;
  /** Cap on the schedule (and on decorrelated delays), in ms. Defaults to 2³¹−1 ms, the host timer's limit. */
  maxDelayMs?: number;
  /** Jitter mode. Defaults to `'additive'`. */
  jitter?: BackoffJitter;
  /** Jitter span: for `additive` a fraction of `baseDelayMs` (>= 0), defaults to 0.5; for `proportional` the fraction of the schedule either side of it (in [0, 1]), defaults to 0.2. Only for those two modes. */
  jitterRatio?: number;
  /** Source of randomness in `[0, 1)`. Defaults to `systemRandom`. */
  random?: RandomSource;
  /** Length of the retry chain this schedule is budgeted for (integer >= 1). Defaults to none. */
  attempts?: number;
  /** Upper bound on `totalMaxFor(attempts)`, checked at construction; needs `attempts`. Defaults to no bound. */
  maxTotalDelayMs?: number;
}

/** Keys of {@link BackoffOptions}. @internal */
export const BACKOFF_KEYS = keysOf<BackoffOptions>()([
  'baseDelayMs',
  'strategy',
  'factor',
  'maxDelayMs',
  'jitter',
  'jitterRatio',
  'random',
  'attempts',
  'maxTotalDelayMs',
]);

/** An immutable backoff schedule; attempt numbers `n` count retries from 1. */
export interface Backoff {
  /** The validated `baseDelayMs` option: delay unit of the schedule, in ms. */
  readonly baseDelayMs: number;
  /** The resolved growth strategy (`'linear'` when the option was omitted). */
  readonly strategy: BackoffStrategy;
  /** The resolved growth factor (2, or 3 for `decorrelated` jitter, when the option was omitted). */
  readonly factor: number;
  /** The resolved cap in ms; 2³¹−1 ms when no lower cap was given. */
  readonly maxDelayMs: number;
  /** The resolved jitter mode (`'additive'` when the option was omitted). */
  readonly jitter: BackoffJitter;
  /** The resolved jitter fraction: of `baseDelayMs` for `additive` (default 0.5), of the schedule for `proportional` (default 0.2). */
  readonly jitterRatio: number;
  /** The `attempts` the schedule was budgeted for, or `undefined`. */
  readonly budgetedAttempts: number | undefined;
  /** The schedule value for retry `n`: the floor, or the cap under `full` jitter. */
  baseFor(n: number): number;
  /** The largest delay `delayFor(n)` can return. */
  maxFor(n: number): number;
  /**
   * A jittered delay for retry `n`. `decorrelated` jitter grows from the
   * delay actually used before, so pass it as `previousDelayMs` (the first
   * retry uses `baseDelayMs`); other modes ignore it.
   */
  delayFor(n: number, previousDelayMs?: number): number;
  /** Worst-case total sleep of a chain of `attempts` calls: `Σ maxFor(1 … attempts − 1)`. */
  totalMaxFor(attempts: number): number;
}

/** The longest delay any schedule returns: the host timer's limit (2³¹ − 1 ms, ~24.8 days). */
export const MAX_BACKOFF_DELAY_MS = 2_147_483_647;

const STRATEGIES: readonly BackoffStrategy[] = ['linear', 'exponential'];
const JITTERS: readonly BackoffJitter[] = [
  'additive',
  'full',
  'decorrelated',
  'proportional',
  'none',
];

function checkAttempt(n: number): void {
  if (!Number.isInteger(n) || n < 1) {
    throw new RangeError(`backoff attempt must be an integer >= 1, got ${String(n)}`);
  }
}

/** A random draw clamped to [0, 1], so a misbehaving source cannot push a delay out of range. */
function draw(random: RandomSource): number {
  const r = random();
  if (!(r >= 0)) return 0;
  return Math.min(r, 1);
}

class BackoffSchedule implements Backoff {
  readonly baseDelayMs: number;
  readonly strategy: BackoffStrategy;
  readonly factor: number;
  readonly maxDelayMs: number;
  readonly jitter: BackoffJitter;
  readonly jitterRatio: number;
  readonly budgetedAttempts: number | undefined;
  private readonly random: RandomSource;

  constructor(options: BackoffOptions) {
    checkOptions('createBackoff', options, BACKOFF_KEYS, '', false);
    this.baseDelayMs = checkNumber('baseDelayMs', options.baseDelayMs, { min: 0 });
    this.strategy = checkOneOf('strategy', options.strategy ?? 'linear', STRATEGIES);
    this.jitter = checkOneOf('jitter', options.jitter ?? 'additive', JITTERS);
    const defaultFactor = this.jitter === 'decorrelated' ? 3 : 2;
    this.factor = optionalNumber('factor', options.factor, defaultFactor, { min: 1 });
    const cap = optionalNumber('maxDelayMs', options.maxDelayMs, MAX_BACKOFF_DELAY_MS, {
      min: 0,
      allowInfinity: true,
    });
    this.maxDelayMs = Math.min(cap, MAX_BACKOFF_DELAY_MS);
    const proportional = this.jitter === 'proportional';
    if (options.jitterRatio !== undefined && this.jitter !== 'additive' && !proportional) {
      throw optionTypeError(
        'jitterRatio',
        `applies only to additive or proportional jitter, got jitterRatio ${String(options.jitterRatio)} with jitter '${this.jitter}'`,
      );
    }
    this.jitterRatio = proportional
      ? optionalNumber('jitterRatio', options.jitterRatio, 0.2, { min: 0, max: 1 })
      : optionalNumber('jitterRatio', options.jitterRatio, 0.5, { min: 0 });
    checkFunction('random', options.random);
    this.random = options.random ?? systemRandom;
    this.budgetedAttempts =
      options.attempts === undefined
        ? undefined
        : checkNumber('attempts', options.attempts, { min: 1, integer: true });
    if (options.maxTotalDelayMs !== undefined) {
      const budget = checkNumber('maxTotalDelayMs', options.maxTotalDelayMs, { min: 0 });
      if (this.budgetedAttempts === undefined) {
        throw optionTypeError(
          'maxTotalDelayMs',
          'needs attempts: the budget covers a chain of that length',
        );
      }
      const total = this.totalMaxFor(this.budgetedAttempts);
      if (total > budget) {
        throw optionRangeError(
          'maxTotalDelayMs',
          `${budget} is exceeded: ${this.budgetedAttempts} attempts may sleep up to ${total} ms`,
        );
      }
    }
    Object.freeze(this);
  }

  baseFor(n: number): number {
    checkAttempt(n);
    if (this.jitter === 'decorrelated') return Math.min(this.baseDelayMs, this.maxDelayMs);
    return this.schedule(n);
  }

  maxFor(n: number): number {
    checkAttempt(n);
    switch (this.jitter) {
      case 'additive':
        return Math.min(
          this.schedule(n) + this.jitterRatio * this.baseDelayMs,
          MAX_BACKOFF_DELAY_MS,
        );
      case 'decorrelated':
        // Each draw stays below previous × factor, starting from base: base × factor^n.
        return this.grow(this.baseDelayMs, this.factor, n);
      case 'proportional':
        return Math.min(this.schedule(n) * (1 + this.jitterRatio), MAX_BACKOFF_DELAY_MS);
      default:
        return this.schedule(n);
    }
  }

  delayFor(n: number, previousDelayMs?: number): number {
    checkAttempt(n);
    switch (this.jitter) {
      case 'none':
        return this.schedule(n);
      case 'full':
        return draw(this.random) * this.schedule(n);
      case 'additive': {
        const jittered = this.schedule(n) + draw(this.random) * this.jitterRatio * this.baseDelayMs;
        return Math.min(jittered, MAX_BACKOFF_DELAY_MS);
      }
      case 'proportional': {
        const spread = this.jitterRatio * (2 * draw(this.random) - 1);
        return Math.min(this.schedule(n) * (1 + spread), MAX_BACKOFF_DELAY_MS);
      }
      default: {
        const base = this.baseDelayMs;
        // Clamp the caller's previous delay into what retry n − 1 could have drawn,
        // so the result never exceeds maxFor(n).
        const limit = n === 1 ? base : this.grow(base, this.factor, n - 1);
        const prev =
          previousDelayMs === undefined || !(previousDelayMs >= base)
            ? base
            : Math.min(previousDelayMs, limit);
        const upper = Math.min(prev * this.factor, this.maxDelayMs);
        if (upper <= base) return Math.min(base, this.maxDelayMs);
        return base + draw(this.random) * (upper - base);
      }
    }
  }

  totalMaxFor(attempts: number): number {
    if (!Number.isInteger(attempts) || attempts < 1) {
      throw new RangeError(
        `totalMaxFor(attempts) must be an integer >= 1, got ${String(attempts)}`,
      );
    }
    let total = 0;
    for (let n = 1; n < attempts; n++) {
      const max = this.maxFor(n);
      // Once the schedule reaches its cap every later term is the same: finish in one step.
      if (this.reachedCap(n)) return total + max * (attempts - n);
      total += max;
    }
    return total;
  }

  private reachedCap(n: number): boolean {
    const growth =
      this.jitter === 'decorrelated'
        ? this.grow(this.baseDelayMs, this.factor, n)
        : this.schedule(n);
    return growth >= this.maxDelayMs;
  }

  /** The capped, undelayed schedule; finite for any n because growth stops at the cap. */
  private schedule(n: number): number {
    if (this.strategy === 'linear') return Math.min(n * this.baseDelayMs, this.maxDelayMs);
    return this.grow(this.baseDelayMs, this.factor, n - 1);
  }

  /** `base × factor^k` capped at `maxDelayMs`, without overflowing to Infinity or NaN. */
  private grow(base: number, factor: number, k: number): number {
    if (base === 0) return 0;
    const value = base * factor ** k;
    // Overflow yields Infinity, which the cap absorbs; `value` is never NaN for base > 0.
    return Math.min(value, this.maxDelayMs);
  }
}

/**
 * Creates an immutable backoff schedule.
 * @example
 * const backoff = createBackoff({ baseDelayMs: 500, strategy: 'exponential', maxDelayMs: 5000, jitter: 'full' });
 * backoff.delayFor(3); // in [0, 2000)
 */
export function createBackoff(options: BackoffOptions): Backoff {
  return new BackoffSchedule(options);
}
