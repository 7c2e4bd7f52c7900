import { saneClock } from '../internal/sane-clock.js';
import { checkFunction, checkOptions, keysOf, optionalNumber } from '../internal/validate.js';
import type { Clock } from '../time/clock.js';

/** Options of {@link createRetryBudget}. */
export interface RetryBudgetOptions {
  /** Retries allowed per request over the window (>= 0); 0.2 allows one retry per five requests. Defaults to 0.2. */
  ratio?: number;
  /** A floor of retries per second that is always allowed, so low traffic can still retry (>= 0). Defaults to 10. */
  minRetriesPerSecond?: number;
  /** How long a deposit or withdrawal counts, in ms (> 0). Defaults to 10 000. */
  ttlMs?: number;
  /**
   * The share of the budget (its floor plus `ratio` × the requests in the window) that hedges
   * never take, in [0, 1]: a hedge is granted only while the balance after it still holds this
   * reserve, so a failed call can always fail over or retry. Defaults to 0.25.
   */
  hedgeReserve?: number;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
}

/** Keys of {@link RetryBudgetOptions}. @internal */
export const RETRY_BUDGET_KEYS = keysOf<RetryBudgetOptions>()([
  'ratio',
  'minRetriesPerSecond',
  'ttlMs',
  'hedgeReserve',
  'clock',
]);

/** A snapshot of a {@link RetryBudget} over its current window. */
export interface RetryBudgetStats {
  /** Requests recorded in the window. */
  requests: number;
  /** Retries granted in the window. */
  retries: number;
  /** Retries that would be granted now (whole retries, >= 0). */
  available: number;
}

/**
 * A retry budget with Finagle/Linkerd semantics: every request deposits,
 * every retry withdraws, over a sliding window of `ttlMs`. Share one between
 * many callers and adapters to bound the retry load they add together.
 */
export interface RetryBudget {
  /** Records one original request (a deposit of `ratio` retries). */
  recordRequest(): void;
  /** Withdraws one retry if the budget allows it; false means do not retry. */
  tryRetry(): boolean;
  /**
   * Withdraws one hedge if the budget allows it and keeps its `hedgeReserve` for retries and
   * failovers; false means do not hedge. A budget without it grants hedges like retries.
   */
  tryHedge?(): boolean;
  /** Whether `tryRetry` would grant a retry now, withdrawing nothing. */
  canRetry?(): boolean;
  /** Counts over the current window. */
  stats(): RetryBudgetStats;
}

/** Slices per window: deposits leave the window one slice (ttlMs / 10) at a time. */
const SLICES = 10;

class SlidingRetryBudget implements RetryBudget {
  private readonly ratio: number;
  /** Retries always available over a window: minRetriesPerSecond × ttl. */
  private readonly floor: number;
  /** The share of the budget hedges leave to retries and failovers. */
  private readonly hedgeReserve: number;
  private readonly sliceMs: number;
  private readonly clock: Clock;
  private readonly requestSlices = new Float64Array(SLICES);
  private readonly retrySlices = new Float64Array(SLICES);
  private requests = 0;
  private retries = 0;
  /** Index (time / sliceMs) of the newest slice; older ones expire as it moves. */
  private current = Number.NEGATIVE_INFINITY;

  constructor(options: RetryBudgetOptions) {
    checkOptions('createRetryBudget', options, RETRY_BUDGET_KEYS);
    this.ratio = optionalNumber('ratio', options.ratio, 0.2, { min: 0 });
    const floor = optionalNumber('minRetriesPerSecond', options.minRetriesPerSecond, 10, {
      min: 0,
    });
    const ttlMs = optionalNumber('ttlMs', options.ttlMs, 10_000, { above: 0 });
    checkFunction('clock', options.clock);
    this.clock = saneClock(options.clock);
    this.hedgeReserve = optionalNumber('hedgeReserve', options.hedgeReserve, 0.25, {
      min: 0,
      max: 1,
    });
    this.floor = (floor * ttlMs) / 1000;
    this.sliceMs = ttlMs / SLICES;
  }

  recordRequest(): void {
    const slot = this.advance();
    (this.requestSlices[slot] as number)++;
    this.requests++;
  }

  tryRetry(): boolean {
    const slot = this.advance();
    // Counts are integers and the balance is derived, so no rounding drift accumulates.
    if (this.balance() < 1) return false;
    (this.retrySlices[slot] as number)++;
    this.retries++;
    return true;
  }

  canRetry(): boolean {
    this.advance();
    return this.balance() >= 1;
  }

  tryHedge(): boolean {
    const slot = this.advance();
    const reserve = this.hedgeReserve * (this.floor + this.ratio * this.requests);
    if (this.balance() < 1 || this.balance() - 1 < reserve) return false;
    (this.retrySlices[slot] as number)++;
    this.retries++;
    return true;
  }

  stats(): RetryBudgetStats {
    this.advance();
    return {
      requests: this.requests,
      retries: this.retries,
      available: Math.max(0, Math.floor(this.balance())),
    };
  }

  private balance(): number {
    return this.floor + this.ratio * this.requests - this.retries;
  }

  /** Expires slices older than the window; returns the slot of the current slice. */
  private advance(): number {
    const index = Math.floor(this.clock() / this.sliceMs);
    if (index !== this.current) {
      // A clock that moved back keeps counting in the newest slice rather than rewriting history.
      if (index < this.current) return this.slotOf(this.current);
      if (this.current === Number.NEGATIVE_INFINITY) this.current = index;
      const stale = Math.min(index - this.current, SLICES);
      for (let i = 1; i <= stale; i++) {
        const slot = this.slotOf(this.current + i);
        this.requests -= this.requestSlices[slot] as number;
        this.retries -= this.retrySlices[slot] as number;
        this.requestSlices[slot] = 0;
        this.retrySlices[slot] = 0;
      }
      this.current = index;
    }
    return this.slotOf(index);
  }

  private slotOf(index: number): number {
    return ((index % SLICES) + SLICES) % SLICES;
  }
}

/**
 * Creates a retry budget: over the last `ttlMs`, retries are allowed while
 * `retries < ratio × requests + minRetriesPerSecond × ttlMs / 1000`.
 * @example
 * const budget = createRetryBudget({ ratio: 0.1 });
 * await withRetry(op, { budget }); // share `budget` across every caller of the upstream
 */
export function createRetryBudget(options: RetryBudgetOptions = {}): RetryBudget {
  return new SlidingRetryBudget(options);
}
