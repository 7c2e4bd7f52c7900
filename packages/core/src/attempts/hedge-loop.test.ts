import { describe, expect, it } from 'vitest';
import { createRetryBudget } from '../retry/budget.js';
import { createManualClock, type ManualClock } from '../time/manual-clock.js';
import { AttemptEngine } from './engine.js';
import { runHedged } from './hedge-loop.js';

/** An attempt the test answers by hand, with what the driver told it. */
interface Started {
  index: number;
  at: number;
  signal: AbortSignal;
  answer(value: string): void;
  fail(error: unknown): void;
}

function hedger(clock: ManualClock, attempts = 3, budget?: ReturnType<typeof createRetryBudget>) {
  const engine = new AttemptEngine({
    attempts,
    hedgeDelayMs: 50,
    budget,
    clock,
    sleep: clock.sleep,
  });
  const started: Started[] = [];
  const chosen: number[] = [];
  const hooks = {
    start(index: number, signal: AbortSignal) {
      return new Promise<string>((answer, fail) => {
        started.push({ index, at: clock(), signal, answer, fail });
      });
    },
    judge: (error: unknown) => (error === 'fatal' ? { retry: false } : {}),
    chosen: (index: number) => void chosen.push(index),
  };
  return { engine, hooks, started, chosen };
}

describe('runHedged — the promise-style hedging driver', () => {
  it('starts another attempt per delay; the first answer wins and the others are aborted', async () => {
    const clock = createManualClock();
    const { engine, hooks, started, chosen } = hedger(clock);
    const call = runHedged(engine, hooks, undefined, Number.POSITIVE_INFINITY);
    await clock.advanceAsync(120);
    expect(started.map((s) => [s.index, s.at])).toEqual([
      [1, 0],
      [2, 50],
      [3, 100],
    ]);
    started[1]?.answer('second');
    await expect(call).resolves.toBe('second');
    expect(chosen).toEqual([2]);
    expect(started.map((s) => s.signal.aborted)).toEqual([true, true, true]);
    expect(clock.pending).toBe(0);
  });

  it('replaces a retryable failure at once when no other attempt runs; a fatal one ends the call', async () => {
    const clock = createManualClock();
    const { engine, hooks, started, chosen } = hedger(clock);
    const call = runHedged(engine, hooks, undefined, Number.POSITIVE_INFINITY);
    started[0]?.fail(new Error('unavailable'));
    await clock.flush();
    expect(started.map((s) => [s.index, s.at])).toEqual([
      [1, 0],
      [2, 0],
    ]);
    started[1]?.fail('fatal');
    await expect(call).rejects.toBe('fatal');
    expect(chosen).toEqual([2]);
    expect(started.length).toBe(2);
  });

  it('draws each hedge from the budget and deposits once per call', async () => {
    const clock = createManualClock();
    // One retry in the window, hedges included (no reserve kept back from them).
    const budget = createRetryBudget({
      ratio: 0,
      minRetriesPerSecond: 0.1,
      hedgeReserve: 0,
      clock,
    });
    const { engine, hooks, started } = hedger(clock, 3, budget);
    const call = runHedged(engine, hooks, undefined, Number.POSITIVE_INFINITY);
    await clock.advanceAsync(200);
    // A floor of 1 retry in the window: one hedge, then the budget refuses.
    expect(started.length).toBe(2);
    expect(budget.stats().requests).toBe(1);
    started[0]?.answer('first');
    await expect(call).resolves.toBe('first');
  });

  it("rejects with the caller's cancellation and aborts every attempt", async () => {
    const clock = createManualClock();
    const { engine, hooks, started } = hedger(clock);
    const caller = new AbortController();
    const call = runHedged(
      engine,
      { ...hooks, cancelled: () => 'cancelled' },
      caller.signal,
      Number.POSITIVE_INFINITY,
    );
    await clock.advanceAsync(60);
    caller.abort();
    await expect(call).rejects.toBe('cancelled');
    expect(started.map((s) => s.signal.aborted)).toEqual([true, true]);
    expect(clock.pending).toBe(0);
  });
});

describe('AttemptEngine.withAttempts', () => {
  it('is the same engine with another attempt count, built once per count', () => {
    const budget = createRetryBudget({});
    const engine = new AttemptEngine({ attempts: 3, hedgeDelayMs: 20, budget });
    const five = engine.withAttempts(5);
    expect(five.attempts).toBe(5);
    expect([five.hedgeDelayMs, five.budget, five.backoff]).toEqual([20, budget, engine.backoff]);
    expect(engine.withAttempts(5)).toBe(five);
    expect(engine.withAttempts(3)).toBe(engine);
  });
});
