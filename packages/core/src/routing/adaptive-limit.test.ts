import { describe, expect, it } from 'vitest';
import { isConcurrencyLimitError } from '../errors/concurrency-limit-error.js';
import { createRouter } from './router.js';
import type { RouteSkippedEvent } from './types.js';

/** A provider whose calls hang until `release()`; counts what it was sent. */
function hanging() {
  const waiting: Array<() => void> = [];
  return {
    sent: 0,
    call(): Promise<string> {
      this.sent++;
      return new Promise((resolve) => waiting.push(() => resolve('ok')));
    },
    release() {
      for (const w of waiting.splice(0)) w();
    },
  };
}

describe('router concurrency.adaptive — one limit per provider', () => {
  it('passes over a provider at its limit, and refuses a request every limit is full for without sending it', async () => {
    const a = hanging();
    const b = hanging();
    let now = 0;
    const router = createRouter({
      providers: [
        { id: 'a', resource: a },
        { id: 'b', resource: b },
      ],
      selection: { type: 'priority', priorities: { a: 2, b: 1 } },
      concurrency: { adaptive: { initialLimit: 1, maxLimit: 1 } },
      clock: () => now,
    });
    const skipped: RouteSkippedEvent[] = [];
    router.onSkipped((e) => skipped.push(e));
    const run = () => router.execute((p) => p.call(), { criticality: 'critical' });
    const first = run();
    const second = run();
    const third = run();
    await expect(third).rejects.toSatisfy(isConcurrencyLimitError);
    expect(a.sent).toBe(1);
    expect(b.sent).toBe(1);
    expect(skipped).toContainEqual({ providerId: 'a', reason: 'concurrency-limit' });
    expect(router.limiter('a')?.inFlight).toBe(1);
    now += 5;
    a.release();
    b.release();
    await expect(Promise.all([first, second])).resolves.toEqual(['ok', 'ok']);
    // A refused request holds no slot; the answered ones gave theirs back.
    expect(router.limiter('a')?.inFlight).toBe(0);
    expect(router.limiter('b')?.inFlight).toBe(0);
    // Neutral for circuits: a refusal is no failure of the provider.
    expect(router.circuit('a')).toBeUndefined();
  });
});
