import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { createBackoff } from '../retry/backoff.js';
import { createRetryBudget } from '../retry/budget.js';
import { createManualClock } from '../time/manual-clock.js';
import {
  AttemptEngine,
  DEFAULT_BACKOFF,
  DEFAULT_MAX_PUSHBACK_MS,
  STOP_ATTEMPTS,
  STOP_BUDGET,
  STOP_DEADLINE,
  STOP_NOT_RETRYABLE,
  STOP_PUSHBACK,
  stopReason,
} from './engine.js';
import { retryAfterFailure } from './retry-loop.js';

const fixed = createBackoff({ baseDelayMs: 100, jitter: 'none' });
const NONE = Number.POSITIVE_INFINITY;

describe('AttemptEngine.afterFailure — the one set of rules', () => {
  it('retries on the backoff schedule until the last attempt', () => {
    const e = new AttemptEngine({ attempts: 3, backoff: fixed });
    expect(e.afterFailure(1, 0, undefined, new Error('x'), NONE)).toBe(100);
    expect(e.afterFailure(2, 100, {}, new Error('x'), NONE)).toBe(200);
    expect(e.afterFailure(3, 200, {}, new Error('x'), NONE)).toBe(STOP_ATTEMPTS);
  });

  it('stops on a verdict that says not to retry, before anything else', () => {
    const budget = createRetryBudget({ ratio: 0, minRetriesPerSecond: 1, ttlMs: 1000 });
    const e = new AttemptEngine({ attempts: 3, backoff: fixed, budget });
    expect(e.afterFailure(1, 0, { retry: false }, new Error('x'), NONE)).toBe(STOP_NOT_RETRYABLE);
    // The refused retry withdrew nothing.
    expect(budget.stats().retries).toBe(0);
  });

  it('lets valid pushback replace the backoff (gRFC A6), shorter or longer', () => {
    const e = new AttemptEngine({ attempts: 3, backoff: fixed });
    expect(e.afterFailure(1, 0, { retryAfterMs: 300 }, undefined, NONE)).toBe(300);
    expect(e.afterFailure(1, 0, { retryAfterMs: 10 }, undefined, NONE)).toBe(10);
    expect(e.afterFailure(1, 0, { retryAfterMs: 0 }, undefined, NONE)).toBe(0);
  });

  it('stops on negative, non-numeric, infinite or too-long pushback', () => {
    const e = new AttemptEngine({ attempts: 3, backoff: fixed });
    for (const retryAfterMs of [-1, Number.NaN, Number.POSITIVE_INFINITY, 30_001]) {
      expect(e.afterFailure(1, 0, { retryAfterMs }, undefined, NONE)).toBe(STOP_PUSHBACK);
    }
    expect(DEFAULT_MAX_PUSHBACK_MS).toBe(30_000);
    expect(e.afterFailure(1, 0, { retryAfterMs: 30_000 }, undefined, NONE)).toBe(30_000);
  });

  it("takes an error's own retryAfterMs when the verdict has none, ignoring invalid ones", () => {
    const e = new AttemptEngine({ attempts: 3, backoff: fixed });
    expect(e.afterFailure(1, 0, {}, { retryAfterMs: 250 }, NONE)).toBe(250);
    expect(e.afterFailure(1, 0, {}, { retryAfterMs: -5 }, NONE)).toBe(100);
    expect(e.afterFailure(1, 0, {}, { retryAfterMs: 'soon' }, NONE)).toBe(100);
  });

  it('skips a retry that cannot start before the deadline', () => {
    const clock = createManualClock(1000);
    const e = new AttemptEngine({ attempts: 3, backoff: fixed, clock });
    expect(e.afterFailure(1, 0, {}, undefined, 1100)).toBe(STOP_DEADLINE);
    expect(e.afterFailure(1, 0, {}, undefined, 1101)).toBe(100);
    expect(e.afterFailure(1, 0, { retryAfterMs: 300 }, undefined, 1200)).toBe(STOP_DEADLINE);
  });

  it('retries an attempt that timed out at once: it already waited (pushback, deadline and budget still rule)', () => {
    const clock = createManualClock(1000);
    const budget = createRetryBudget({ ratio: 0, minRetriesPerSecond: 0.3, ttlMs: 10_000, clock });
    const e = new AttemptEngine({ attempts: 4, backoff: fixed, budget, clock });
    // Core's own attempt timeout, and a verdict that says so (a framework's timeout status).
    expect(e.afterFailure(1, 0, {}, new DeadlineExceededError(300), NONE)).toBe(0);
    expect(e.afterFailure(2, 0, { timedOut: true }, new Error('x'), NONE)).toBe(0);
    expect(e.afterFailure(1, 0, { timedOut: true, retryAfterMs: 40 }, undefined, NONE)).toBe(40);
    // At the deadline, nothing can follow; a timed-out attempt is still a retry for the budget.
    clock.advance(500);
    expect(e.afterFailure(1, 0, { timedOut: true }, undefined, 1500)).toBe(STOP_DEADLINE);
    expect(budget.stats().retries).toBe(3);
    expect(e.afterFailure(1, 0, { timedOut: true }, undefined, NONE)).toBe(STOP_BUDGET);
    // Any other failure still backs off.
    const plain = new AttemptEngine({ attempts: 4, backoff: fixed, clock });
    expect(plain.afterFailure(1, 0, { timedOut: false }, new Error('x'), NONE)).toBe(100);
  });

  it('retries at once the first time an attempt was turned away untouched (unprocessed, neverSent); later retries back off', () => {
    const clock = createManualClock(1000);
    const budget = createRetryBudget({ ratio: 0, minRetriesPerSecond: 0.3, ttlMs: 10_000, clock });
    const e = new AttemptEngine({
      attempts: 3,
      backoff: fixed,
      retryTurnedAwayAtOnce: true,
      budget,
      clock,
    });
    // The call's first failure: the retry goes now (over round_robin, to another replica).
    expect(e.afterFailure(1, 0, { unprocessed: true }, new Error('x'), NONE)).toBe(0);
    expect(e.afterFailure(1, 0, { neverSent: true }, new Error('x'), NONE)).toBe(0);
    // Its second failure backs off from the start of the schedule: one dead target is not hammered.
    expect(e.afterFailure(2, 0, { unprocessed: true }, new Error('x'), NONE)).toBe(200);
    // Pushback still replaces it, the deadline and the budget still rule.
    expect(e.afterFailure(1, 0, { unprocessed: true, retryAfterMs: 40 }, undefined, NONE)).toBe(40);
    expect(e.afterFailure(1, 0, { unprocessed: true }, undefined, 1000)).toBe(STOP_DEADLINE);
    expect(budget.stats().retries).toBe(3);
    expect(e.afterFailure(1, 0, { unprocessed: true }, undefined, NONE)).toBe(STOP_BUDGET);
    // A failure the server may have processed still backs off the first time too.
    const unbudgeted = new AttemptEngine({
      attempts: 3,
      backoff: fixed,
      retryTurnedAwayAtOnce: true,
    });
    expect(unbudgeted.afterFailure(1, 0, { unprocessed: false }, new Error('x'), NONE)).toBe(100);
    // The default backoff comes with the rule; a backoff given means what it says.
    const standard = new AttemptEngine({ attempts: 3 });
    expect(standard.afterFailure(1, 0, { unprocessed: true }, undefined, NONE)).toBe(0);
    expect(standard.withAttempts(5).afterFailure(1, 0, { neverSent: true }, undefined, NONE)).toBe(
      0,
    );
    const given = new AttemptEngine({ attempts: 3, backoff: fixed, clock });
    expect(given.afterFailure(1, 0, { unprocessed: true }, undefined, NONE)).toBe(100);
  });

  it('asks the budget last and stops when it refuses', () => {
    const clock = createManualClock();
    const budget = createRetryBudget({ ratio: 0, minRetriesPerSecond: 0.1, ttlMs: 10_000, clock });
    const e = new AttemptEngine({ attempts: 5, backoff: fixed, budget, clock });
    expect(e.afterFailure(1, 0, {}, undefined, NONE)).toBe(100);
    expect(e.afterFailure(1, 0, {}, undefined, NONE)).toBe(STOP_BUDGET);
    // A stop for another reason does not touch the budget.
    expect(e.afterFailure(5, 0, {}, undefined, NONE)).toBe(STOP_ATTEMPTS);
    expect(budget.stats().retries).toBe(1);
  });

  it('names every stop code', () => {
    expect(
      [STOP_NOT_RETRYABLE, STOP_ATTEMPTS, STOP_PUSHBACK, STOP_DEADLINE, STOP_BUDGET].map(
        stopReason,
      ),
    ).toEqual(['not-retryable', 'attempts', 'pushback', 'deadline', 'budget']);
  });

  it('uses the one default backoff: exponential from 100 ms, full jitter, capped at 5 s', () => {
    expect(DEFAULT_BACKOFF.strategy).toBe('exponential');
    expect(DEFAULT_BACKOFF.jitter).toBe('full');
    expect(DEFAULT_BACKOFF.maxFor(1)).toBe(100);
    expect(DEFAULT_BACKOFF.maxFor(20)).toBe(5000);
  });

  it('never returns a delay that is negative, NaN or past the deadline (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 12 }),
        fc.option(fc.oneof(fc.double(), fc.integer({ min: -10, max: 60_000 }))),
        fc.option(fc.boolean()),
        fc.integer({ min: 0, max: 100_000 }),
        (attempts, attempt, retryAfterMs, retry, left) => {
          const clock = createManualClock(0);
          const e = new AttemptEngine({ attempts, clock });
          const verdict = {
            ...(retryAfterMs === null ? {} : { retryAfterMs }),
            ...(retry === null ? {} : { retry }),
          };
          const d = e.afterFailure(attempt, 0, verdict, undefined, left);
          if (d >= 0) {
            expect(Number.isFinite(d)).toBe(true);
            expect(d).toBeLessThan(left);
            expect(attempt).toBeLessThan(attempts);
            expect(retry).not.toBe(false);
          } else {
            expect([-1, -2, -3, -4, -5]).toContain(d);
          }
        },
      ),
      { seed: 17, numRuns: 500 },
    );
  });
});

describe('AttemptEngine hedging and failover', () => {
  it('replaces a failed hedged attempt at once (pushback only, never backoff)', () => {
    const e = new AttemptEngine({ attempts: 3, backoff: fixed, hedgeDelayMs: 50 });
    expect(e.afterFailure(1, 0, {}, undefined, NONE)).toBe(0);
    expect(e.afterFailure(1, 0, { retryAfterMs: 40 }, undefined, NONE)).toBe(40);
  });

  it('hedges within attempts, before the deadline and the budget', () => {
    const clock = createManualClock();
    // One retry in the window, hedges included (no reserve kept back from them).
    const budget = createRetryBudget({
      ratio: 0,
      minRetriesPerSecond: 0.1,
      hedgeReserve: 0,
      clock,
    });
    const e = new AttemptEngine({ attempts: 3, hedgeDelayMs: 50, budget, clock });
    expect(e.mayHedge(3, NONE)).toBe(false);
    expect(e.mayHedge(1, 0)).toBe(false);
    expect(e.mayHedge(1, NONE)).toBe(true);
    expect(e.mayHedge(2, NONE)).toBe(false);
    expect(new AttemptEngine({ attempts: 3 }).mayHedge(1, NONE)).toBe(false);
  });

  it('charges a failover to the budget and honours failover: false', () => {
    const clock = createManualClock();
    const budget = createRetryBudget({ ratio: 0, minRetriesPerSecond: 0.1, ttlMs: 10_000, clock });
    const e = new AttemptEngine({ attempts: 1, budget, clock });
    expect(e.mayFailOver({ failover: false })).toBe(STOP_NOT_RETRYABLE);
    expect(e.mayFailOver(undefined)).toBe(0);
    expect(e.mayFailOver({})).toBe(STOP_BUDGET);
  });

  it('a hedge never takes the budget reserve a failover needs', () => {
    const clock = createManualClock();
    // 4 retries in the window; a quarter (1) is kept for retries and failovers.
    const budget = createRetryBudget({ ratio: 0, minRetriesPerSecond: 0.4, ttlMs: 10_000, clock });
    const e = new AttemptEngine({ attempts: 10, hedgeDelayMs: 50, budget, clock });
    expect([1, 2, 3, 4].map(() => e.mayHedge(1, NONE))).toEqual([true, true, true, false]);
    expect(e.mayFailOver({})).toBe(0);
    expect(e.mayFailOver({})).toBe(STOP_BUDGET);
  });

  it('a failure that never reached a server retries and fails over without the budget', () => {
    const clock = createManualClock();
    const budget = createRetryBudget({ ratio: 0, minRetriesPerSecond: 0, clock });
    const e = new AttemptEngine({ attempts: 3, backoff: fixed, budget, clock });
    const neverSent = { neverSent: true };
    expect(e.mayFailOver(neverSent)).toBe(0);
    expect(e.afterFailure(1, 0, neverSent, undefined, NONE)).toBe(100);
    // Bounded by the attempts instead.
    expect(e.afterFailure(3, 0, neverSent, undefined, NONE)).toBe(STOP_ATTEMPTS);
    expect(budget.stats().retries).toBe(0);
    // A failure that reached the server is charged (and refused here).
    expect(e.mayFailOver({})).toBe(STOP_BUDGET);
    expect(e.afterFailure(1, 0, {}, undefined, NONE)).toBe(STOP_BUDGET);
  });

  it('starts no failover at or after the deadline, and then charges nothing', () => {
    const clock = createManualClock(1_000);
    const budget = createRetryBudget({ ratio: 0, minRetriesPerSecond: 0.1, ttlMs: 10_000, clock });
    const e = new AttemptEngine({ attempts: 1, budget, clock });
    expect(e.mayFailOver({}, 1_000)).toBe(STOP_DEADLINE);
    expect(e.mayFailOver({}, 1_001)).toBe(0);
  });
});

describe('AttemptEngine.schedule', () => {
  it('runs after the delay on the injected sleep, and not at all once cancelled', async () => {
    const clock = createManualClock();
    const e = new AttemptEngine({ attempts: 2, clock, sleep: clock.sleep });
    const ran: string[] = [];
    e.schedule(100, () => ran.push('a'), undefined);
    const c = new AbortController();
    e.schedule(100, () => ran.push('b'), c.signal);
    e.schedule(0, () => ran.push('now'), undefined);
    await clock.flush();
    expect(ran).toEqual(['now']);
    c.abort();
    await clock.advanceAsync(100);
    expect(ran).toEqual(['now', 'a']);
    expect(clock.pending).toBe(0);
  });

  it('runs at once when the sleep throws (a broken timer never strands a call)', async () => {
    const e = new AttemptEngine({
      attempts: 2,
      sleep: () => {
        throw new Error('no timer');
      },
    });
    const ran = await new Promise<boolean>((resolve) =>
      e.schedule(1000, () => resolve(true), undefined),
    );
    expect(ran).toBe(true);
  });
});

describe('retryAfterFailure — the promise-style driver', () => {
  it('retries until an attempt succeeds, telling the failed attempt number', async () => {
    const clock = createManualClock();
    const e = new AttemptEngine({ attempts: 4, backoff: fixed, clock, sleep: clock.sleep });
    const told: Array<[number, number]> = [];
    let calls = 1;
    const result = retryAfterFailure(
      e,
      {
        run: (n) => {
          calls++;
          if (n < 3) throw new Error(`fail ${n}`);
          return `ok ${n}`;
        },
        judge: () => undefined,
        retrying: (attempt, delayMs) => told.push([attempt, delayMs]),
      },
      1,
      new Error('fail 1'),
      new AbortController().signal,
      NONE,
    );
    await expect(clock.run(result)).resolves.toBe('ok 3');
    expect(calls).toBe(3);
    expect(told).toEqual([
      [1, 100],
      [2, 200],
    ]);
  });

  it('sends the retry of a turned-away attempt at the moment it failed, the next one after backoff (manual clock)', async () => {
    const clock = createManualClock(5_000);
    const e = new AttemptEngine({
      attempts: 3,
      backoff: fixed,
      retryTurnedAwayAtOnce: true,
      clock,
      sleep: clock.sleep,
    });
    const startedAt: number[] = [];
    const result = retryAfterFailure(
      e,
      {
        run: (n) => {
          startedAt.push(clock());
          if (n < 3) throw new Error(`UNAVAILABLE ${n}`);
          return `ok ${n}`;
        },
        judge: () => ({ unprocessed: true }),
      },
      1,
      new Error('UNAVAILABLE 1'),
      new AbortController().signal,
      NONE,
    );
    await expect(clock.run(result)).resolves.toBe('ok 3');
    // Attempt 2 at the first failure's instant; attempt 3 after attempt 2's backoff (200 ms).
    expect(startedAt).toEqual([5_000, 5_200]);
  });

  it('rejects with the last error unchanged when the engine stops', async () => {
    const clock = createManualClock();
    const e = new AttemptEngine({ attempts: 2, backoff: fixed, clock, sleep: clock.sleep });
    const last = new Error('second');
    const result = retryAfterFailure(
      e,
      {
        run: () => Promise.reject(last),
        judge: () => undefined,
      },
      1,
      new Error('first'),
      new AbortController().signal,
      NONE,
    );
    await expect(clock.run(result)).rejects.toBe(last);
  });

  it('stops waiting and rejects with the caller reason on abort, never judging it', async () => {
    const clock = createManualClock();
    const e = new AttemptEngine({ attempts: 5, backoff: fixed, clock, sleep: clock.sleep });
    const c = new AbortController();
    let judged = 0;
    const result = retryAfterFailure(
      e,
      {
        run: () => Promise.reject(new Error('again')),
        judge: () => {
          judged++;
          return undefined;
        },
      },
      1,
      new Error('first'),
      c.signal,
      NONE,
    );
    await clock.flush();
    const reason = new Error('caller gave up');
    c.abort(reason);
    await expect(result).rejects.toBe(reason);
    expect(judged).toBe(1);
    expect(clock.pending).toBe(0);
  });
});
