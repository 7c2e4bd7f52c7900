import { checkFunction, checkNumber, checkOptions, keysOf } from '../internal/validate.js';
import { type Clock, systemClock } from '../time/clock.js';

/**
 * An absolute point in time that work must finish by. Adapters propagate it
 * (gRPC sends it as the call deadline); nested deadlines take the minimum.
 */
export interface Deadline {
  /** Epoch ms the deadline falls at; `Infinity` for none. */
  readonly at: number;
  /** The clock the deadline is read with. */
  readonly clock: Clock;
  /** True once the deadline has passed. */
  readonly expired: boolean;
  /** Milliseconds left, never negative; `Infinity` for no deadline. */
  remainingMs(): number;
  /** The earlier of this deadline and `other` (this one when `other` is undefined). */
  min(other: Deadline | undefined): Deadline;
  /** The deadline as a `Date` (gRPC's `deadline` call option accepts it). */
  toDate(): Date;
}

/** Options of {@link createDeadline}: give exactly one of `timeoutMs` and `at`. */
export interface DeadlineOptions {
  /** Milliseconds from now (>= 0, or `Infinity` for none). */
  timeoutMs?: number;
  /** Absolute epoch ms (as read by `clock`). */
  at?: number;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
}

/** Keys of {@link DeadlineOptions}. @internal */
export const DEADLINE_KEYS = keysOf<DeadlineOptions>()(['timeoutMs', 'at', 'clock']);

class AbsoluteDeadline implements Deadline {
  constructor(
    readonly at: number,
    readonly clock: Clock,
  ) {
    Object.freeze(this);
  }

  get expired(): boolean {
    return this.clock() >= this.at;
  }

  remainingMs(): number {
    return Math.max(this.at - this.clock(), 0);
  }

  min(other: Deadline | undefined): Deadline {
    return other === undefined || this.at <= other.at ? this : other;
  }

  toDate(): Date {
    return new Date(this.at);
  }
}

/**
 * Creates a {@link Deadline} `timeoutMs` from now, or at the absolute time `at`.
 * A bare number is a timeout in ms.
 * @example
 * const deadline = createDeadline({ timeoutMs: 2000 });
 * await withTimeout(op, { deadline });
 */
export function createDeadline(options: number | DeadlineOptions): Deadline {
  const opts: DeadlineOptions = typeof options === 'number' ? { timeoutMs: options } : options;
  checkOptions('createDeadline', opts, DEADLINE_KEYS, '', false);
  checkFunction('clock', opts.clock);
  const clock = opts.clock ?? systemClock;
  if ((opts.timeoutMs === undefined) === (opts.at === undefined)) {
    throw new TypeError('createDeadline needs exactly one of timeoutMs and at');
  }
  if (opts.at !== undefined) {
    return new AbsoluteDeadline(checkNumber('at', opts.at, { allowInfinity: true }), clock);
  }
  const timeoutMs = checkNumber('timeoutMs', opts.timeoutMs, { min: 0, allowInfinity: true });
  return new AbsoluteDeadline(clock() + timeoutMs, clock);
}

/**
 * The earliest of `deadlines`, skipping `undefined`; `undefined` when none is given.
 * @example earliestDeadline(parentDeadline, createDeadline({ timeoutMs: 500 }))
 */
export function earliestDeadline(...deadlines: (Deadline | undefined)[]): Deadline | undefined {
  let earliest: Deadline | undefined;
  for (const d of deadlines)
    if (d !== undefined && (earliest === undefined || d.at < earliest.at)) earliest = d;
  return earliest;
}
