import { describe, expect, it } from 'vitest';
import { createManualClock } from '../time/manual-clock.js';
import { createRetryBudget } from './budget.js';

function drain(budget: { tryRetry(): boolean }): number {
  let granted = 0;
  while (budget.tryRetry()) granted++;
  return granted;
}

describe('createRetryBudget', () => {
  it('the floor: minRetriesPerSecond × ttl retries with no requests at all', () => {
    const clock = createManualClock(1_000_000);
    const budget = createRetryBudget({ minRetriesPerSecond: 2, ttlMs: 5000, clock });
    expect(budget.stats().available).toBe(10);
    expect(drain(budget)).toBe(10);
    expect(budget.stats()).toEqual({ requests: 0, retries: 10, available: 0 });
  });

  it('tryHedge keeps hedgeReserve (default a quarter) of the budget for retries', () => {
    const clock = createManualClock();
    const budget = createRetryBudget({ ratio: 0.2, minRetriesPerSecond: 1, ttlMs: 10_000, clock });
    for (let i = 0; i < 50; i++) budget.recordRequest();
    // 10 + 0.2 × 50 = 20 in the window; hedges leave 5.
    let hedges = 0;
    while (budget.tryHedge?.()) hedges++;
    expect(hedges).toBe(15);
    expect(drain(budget)).toBe(5);
    const none = createRetryBudget({ minRetriesPerSecond: 1, ttlMs: 1000, hedgeReserve: 1, clock });
    expect(none.tryHedge?.()).toBe(false);
    expect(none.tryRetry()).toBe(true);
    expect(() => createRetryBudget({ hedgeReserve: 2 })).toThrow(/hedgeReserve/);
  });

  it('the ratio: each request deposits `ratio` retries', () => {
    const clock = createManualClock();
    const budget = createRetryBudget({ ratio: 0.2, minRetriesPerSecond: 0, clock });
    for (let i = 0; i < 4; i++) budget.recordRequest();
    expect(budget.tryRetry()).toBe(false);
    budget.recordRequest();
    expect(budget.tryRetry()).toBe(true);
    expect(budget.tryRetry()).toBe(false);
    for (let i = 0; i < 100; i++) budget.recordRequest();
    expect(drain(budget)).toBe(20);
  });

  it('ratio + floor add up', () => {
    const clock = createManualClock();
    const budget = createRetryBudget({ ratio: 0.5, minRetriesPerSecond: 1, ttlMs: 3000, clock });
    for (let i = 0; i < 10; i++) budget.recordRequest();
    expect(drain(budget)).toBe(3 + 5);
  });

  it('deposits and withdrawals expire after ttlMs', () => {
    const clock = createManualClock();
    const budget = createRetryBudget({ ratio: 1, minRetriesPerSecond: 0, ttlMs: 1000, clock });
    for (let i = 0; i < 5; i++) budget.recordRequest();
    expect(drain(budget)).toBe(5);
    clock.advance(500);
    for (let i = 0; i < 3; i++) budget.recordRequest();
    expect(drain(budget)).toBe(3);
    // The first burst (deposits and withdrawals) leaves the window; the second is still in it.
    clock.advance(600);
    expect(budget.stats()).toEqual({ requests: 3, retries: 3, available: 0 });
    clock.advance(1000);
    expect(budget.stats()).toEqual({ requests: 0, retries: 0, available: 0 });
    budget.recordRequest();
    expect(budget.tryRetry()).toBe(true);
  });

  it('a long pause clears everything; a clock moving back keeps counting', () => {
    const clock = createManualClock(50_000);
    const budget = createRetryBudget({ ratio: 1, minRetriesPerSecond: 0, ttlMs: 1000, clock });
    budget.recordRequest();
    clock.advance(1_000_000);
    expect(budget.stats().requests).toBe(0);
    budget.recordRequest();
    clock.set(0);
    budget.recordRequest();
    expect(budget.stats().requests).toBe(2);
  });

  it('defaults: ratio 0.2, 10 retries/s over 10 s', () => {
    const clock = createManualClock();
    const budget = createRetryBudget({ clock });
    for (let i = 0; i < 50; i++) budget.recordRequest();
    expect(budget.stats().available).toBe(100 + 10);
  });

  it('rejects invalid options naming them', () => {
    expect(() => createRetryBudget({ ratio: -1 })).toThrow(/ratio must be >= 0/);
    expect(() => createRetryBudget({ ratio: Number.NaN })).toThrow(/ratio must be a number/);
    expect(() => createRetryBudget({ minRetriesPerSecond: -1 })).toThrow(/minRetriesPerSecond/);
    expect(() => createRetryBudget({ ttlMs: 0 })).toThrow(/ttlMs must be > 0/);
    expect(() => createRetryBudget({ clock: 5 as never })).toThrow(/clock must be a function/);
  });
});
