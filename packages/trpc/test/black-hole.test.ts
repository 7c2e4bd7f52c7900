import type { ChaosTrpcRouter, ChaosTrpcServer } from '@breakwater/chaos';
import type { CircuitBreaker, TelemetryTarget } from '@breakwater/core';
import { describe, expect, it } from 'vitest';
import { routingLink } from '../src/index.js';
import { batchLink, chaos, clientOf } from './helpers.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('routingLink over three tRPC servers, one black-holed (accepts, never answers)', () => {
  // Round robin keeps sending the hole its turns until its circuit opens (least-loaded, the
  // default, mostly stops choosing it as its visits pile up: 0-4 of 150 calls in three runs).
  it('round-robin: backs up each hung visit, counts it for its endpoint, ejects the hole within 400 ms and skips it once its circuit opens', async () => {
    const selection = 'round-robin';
    const servers: ChaosTrpcServer[] = [];
    for (const name of ['a', 'b', 'hole']) servers.push(await chaos({ name }));
    const hole = servers[2] as ChaosTrpcServer;
    // The circuits, as the router's telemetry hears of them: when the hole's opens.
    const opened: number[] = [];
    const circuit = (breaker: CircuitBreaker, target: TelemetryTarget) => {
      if (target.name !== 'hole') return;
      breaker.onStateChange((e) => {
        if (e.to === 'open') opened.push(performance.now());
      });
    };
    const client = clientOf([
      routingLink<ChaosTrpcRouter>({
        endpoints: servers.map((s) => ({ id: s.name, link: batchLink(s.url) })),
        timeoutMs: 1_000,
        selection,
        protection: { circuit: {} },
        telemetry: { startCall: () => undefined, circuit },
      }),
    ]);
    // A short warm-up: the endpoints' normal latency is what a hung visit is judged by.
    for (let i = 0; i < 40; i++) await client.echo.query('warm');
    hole.setFaults({ hangRate: 1 });
    for (const s of servers) s.resetStats();
    const hungAt = performance.now();
    const calls: Promise<boolean>[] = [];
    // ~50 calls a second for 3 s, each with the link's 1 s deadline.
    for (let i = 0; i < 150; i++) {
      calls.push(
        client.echo.query(`m${i}`, { context: { callId: `c${i}` } }).then(
          () => true,
          () => false,
        ),
      );
      await pause(20);
    }
    const ok = (await Promise.all(calls)).filter(Boolean).length;
    const openedAfterMs = (opened[0] ?? Number.POSITIVE_INFINITY) - hungAt;
    const holeSaw = hole.stats().requests;
    console.info(
      `routingLink black hole (${selection}): ${ok}/150 answered; hole's circuit open ${openedAfterMs.toFixed(0)} ms after the hang; the hole saw ${holeSaw} requests`,
    );
    expect(ok / 150).toBeGreaterThanOrEqual(0.98);
    // Two visits in a row ran past the hole's 100 ms cut while another server answered: within
    // its round-robin turn (60 ms) and two cuts (measured 680-800 ms before that rule).
    expect(openedAfterMs).toBeLessThan(400);
    // Skipped once open: only the calls before it opened, and recovery probes, went there.
    expect(holeSaw).toBeLessThan(25);
  }, 20_000);
});
