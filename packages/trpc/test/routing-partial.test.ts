import type { ChaosTrpcRouter } from '@breakwater/chaos';
import { createRetryBudget, STANDARD_RESILIENCE } from '@breakwater/core';
import { describe, expect, it } from 'vitest';
import { routingLink } from '../src/index.js';
import { batchLink, chaos, clientOf } from './helpers.js';

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Issue 30: one server of three killed (its listener closed), 50 queries/s, a small retry
// budget. Every query must succeed, without the budget paying for failovers no server saw.
describe('routingLink: one server killed', () => {
  it('every query succeeds, the dead one is ejected, and its failovers draw nothing from the budget', async () => {
    const servers = await Promise.all(['a', 'b', 'c'].map((name) => chaos({ name })));
    const budget = createRetryBudget({ ratio: 0.2, minRetriesPerSecond: 1 });
    const client = clientOf([
      routingLink<ChaosTrpcRouter>({
        endpoints: servers.map((s, i) => ({
          id: ['a', 'b', 'c'][i] as string,
          link: batchLink(s.url),
        })),
        selection: 'round-robin',
        protection: { circuit: STANDARD_RESILIENCE.circuit },
        budget,
      }),
    ]);
    const [dead, ...alive] = servers;
    for (let i = 0; i < 6; i++) await client.echo.query(String(i));
    await dead?.stop();
    const before = alive.reduce((n, s) => n + s.stats().requests, 0);
    const calls = 150;
    let ok = 0;
    for (let i = 0; i < calls; i++) {
      await wait(20);
      const r = await client.echo.query(String(i)).catch(() => undefined);
      if (r !== undefined) ok++;
    }
    expect(ok).toBe(calls);
    // Each query reached one live server exactly once.
    expect(alive.reduce((n, s) => n + s.stats().requests, 0) - before).toBe(calls);
    expect(budget.stats().retries).toBe(0);
  });
});

// Issue 30, the demo's "B long tail": a dead, b slow on every fifth query. A slow query runs
// past b's derived cut; the backup goes to a (dead, or its circuit half-open) and fails — b's
// own attempt, left running, answers it.
describe('routingLink: one server killed, the other 300 ms slow on some queries', () => {
  it('every query is answered by the slow server, which saw each slow query once', async () => {
    const [a, b] = await Promise.all(['a', 'b'].map((name) => chaos({ name })));
    if (a === undefined || b === undefined) throw new Error('two servers expected');
    const client = clientOf([
      routingLink<ChaosTrpcRouter>({
        endpoints: [
          { id: 'a', link: batchLink(a.url) },
          { id: 'b', link: batchLink(b.url) },
        ],
        timeoutMs: 1_000,
        selection: 'round-robin',
        protection: { circuit: STANDARD_RESILIENCE.circuit },
      }),
    ]);
    for (let i = 0; i < 40; i++) await client.echo.query('warm');
    await a.stop();
    const lost: number[] = [];
    const slowSeen: number[] = [];
    for (let i = 0; i < 100; i++) {
      await wait(20);
      const slow = i % 5 === 0;
      if (slow) b.setFaults({ latency: { kind: 'fixed', ms: 300 } });
      const before = b.stats().requests;
      const r = await client.echo.query(String(i)).catch(() => undefined);
      if (slow) {
        slowSeen.push(b.stats().requests - before);
        b.setFaults({});
      }
      if (r === undefined) lost.push(i);
    }
    expect(lost).toEqual([]);
    expect(slowSeen).toEqual(Array.from({ length: 20 }, () => 1));
  }, 20_000);
});
