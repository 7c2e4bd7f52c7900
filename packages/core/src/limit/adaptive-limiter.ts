import { ConcurrencyLimitError } from '../errors/concurrency-limit-error.js';
import { checkFunction, optionPath } from '../internal/validate.js';
import { err, ok, type Result } from '../result/result.js';
import { type Clock, monotonicClock } from '../time/clock.js';
import type { Criticality } from './criticality.js';
import {
  type AdaptiveConcurrencyOptions,
  GradientLimit,
  type GradientSettings,
  resolveAdaptiveConcurrency,
} from './gradient-limit.js';

/**
 * What a call's end tells the limit about its target's load:
 * `'answered'` — the target answered (success or an application error), so
 * the call's latency is a sample; `'dropped'` — it timed out, or the target
 * said it is overloaded, so the limit is cut; `'ignored'` — it tells nothing
 * (the caller cancelled it, or it failed before reaching the target).
 */
export type LimitOutcome = 'answered' | 'dropped' | 'ignored';

/** A call's slot under an {@link AdaptiveLimiter}. */
export interface LimitPermit {
  /** Gives the slot back, telling what the call's end says about the target; a second release does nothing. */
  release(outcome: LimitOutcome): void;
}

/** An adaptive concurrency limit for one target, with criticality tiers. */
export interface AdaptiveLimiter {
  /**
   * Takes a slot for a call of `criticality` (`'default'` when left out), or
   * refuses it with `ConcurrencyLimitError` when the calls in flight already
   * fill the share of the limit that criticality may use. Never waits.
   */
  tryAcquire(criticality?: Criticality): Result<LimitPermit, ConcurrencyLimitError>;
  /** Whether `tryAcquire(criticality)` would take a slot now. */
  hasRoom(criticality?: Criticality): boolean;
  /** Calls that may be in flight now, as discovered from latency. */
  readonly limit: number;
  /** Calls holding a slot now. */
  readonly inFlight: number;
  /** Calls of `criticality` refused since the limiter was created. */
  refusals(criticality: Criticality): number;
}

/** Options of {@link createAdaptiveLimiter}. */
export interface AdaptiveLimiterOptions extends AdaptiveConcurrencyOptions {
  /** Time source of the latency samples. Defaults to `monotonicClock`. */
  clock?: Clock;
}

class Permit implements LimitPermit {
  private held = true;

  constructor(
    private readonly limiter: Limiter,
    private readonly startedAt: number,
    private readonly inFlightAtStart: number,
  ) {}

  release(outcome: LimitOutcome): void {
    if (!this.held) return;
    this.held = false;
    this.limiter.released(this.startedAt, this.inFlightAtStart, outcome);
  }
}

class Limiter implements AdaptiveLimiter {
  inFlight = 0;
  private readonly estimate: GradientLimit;
  private readonly refused = { critical: 0, default: 0, sheddable: 0 };

  constructor(
    private readonly settings: GradientSettings,
    private readonly clock: Clock,
  ) {
    this.estimate = new GradientLimit(settings, clock());
  }

  get limit(): number {
    return this.estimate.limit;
  }

  hasRoom(criticality: Criticality = 'default'): boolean {
    const share = criticality === 'critical' ? 1 : this.settings.shares[criticality];
    return this.inFlight < this.estimate.limit * share;
  }

  tryAcquire(criticality: Criticality = 'default'): Result<LimitPermit, ConcurrencyLimitError> {
    if (!this.hasRoom(criticality)) {
      this.refused[criticality]++;
      return err(new ConcurrencyLimitError(this.estimate.limit, this.inFlight, criticality));
    }
    this.inFlight++;
    return ok(new Permit(this, this.clock(), this.inFlight));
  }

  refusals(criticality: Criticality): number {
    return this.refused[criticality];
  }

  released(startedAt: number, inFlightAtStart: number, outcome: LimitOutcome): void {
    this.inFlight--;
    if (outcome === 'ignored') return;
    const now = this.clock();
    if (outcome === 'answered') this.estimate.answered(startedAt, now, inFlightAtStart);
    else this.estimate.dropped(startedAt, now);
  }
}

/**
 * Creates an adaptive concurrency limit for one target (what
 * `concurrency: { adaptive }` builds per method or provider). The limit is
 * discovered from the latency of answered calls; a call over it is refused at
 * once, lowest criticality first.
 * @example
 * const limiter = createAdaptiveLimiter({ maxLimit: 200 });
 * const slot = limiter.tryAcquire('sheddable');
 * if (!slot.ok) throw slot.error; // ConcurrencyLimitError
 * try {
 *   const answer = await callBackend();
 *   slot.value.release('answered');
 *   return answer;
 * } catch (error) {
 *   slot.value.release(isDeadlineExceededError(error) ? 'dropped' : 'answered');
 *   throw error;
 * }
 */
export function createAdaptiveLimiter(options: AdaptiveLimiterOptions = {}): AdaptiveLimiter {
  return optionPath(
    '',
    () => {
      const { clock, ...params } = options;
      checkFunction('clock', clock);
      return new Limiter(resolveAdaptiveConcurrency(params), clock ?? monotonicClock);
    },
    'createAdaptiveLimiter',
  );
}

/** {@link createAdaptiveLimiter} from settings already validated. @internal */
export function adaptiveLimiterOf(settings: GradientSettings, clock: Clock): AdaptiveLimiter {
  return new Limiter(settings, clock);
}
