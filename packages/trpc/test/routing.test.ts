import type { ChaosTrpcRouter } from '@breakwater/chaos';
import { isDeadlineExceededError } from '@breakwater/core';
import { createManualClock } from '@breakwater/core/time';
import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { type RoutingLinkOptions, routingLink, type TRPCIdempotent } from '../src/index.js';
import { batchLink, chaos, clientOf, errorOf } from './helpers.js';

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function failoverPair(extra: { idempotent?: TRPCIdempotent } = {}) {
  const primary = await chaos({ name: 'primary' });
  const secondary = await chaos({ name: 'secondary' });
  const recovered: string[] = [];
  const client = clientOf([
    routingLink<ChaosTrpcRouter>({
      ...extra,
      endpoints: [
        { id: 'primary', link: batchLink(primary.url) },
        { id: 'secondary', link: batchLink(secondary.url) },
      ],
      selection: { type: 'priority', priorities: { primary: 1, secondary: 0 } },
      protection: { circuit: { failureSpanMs: 0, failureThreshold: 2, openDurationMs: 300 } },
    }),
  ]);
  return { primary, secondary, client, recovered };
}

describe('routingLink (core router over tRPC endpoints)', () => {
  it('fails over: refused, then HTML 502, then healthy secondary — zero failed queries; traffic returns after one probe', async () => {
    const { primary, secondary, client } = await failoverPair();
    const answeredBy: string[] = [];
    const query = async (i: number) => {
      const r = await client.echo.query(String(i));
      answeredBy.push(r.server);
    };

    // Phase 1: primary down (connection refused).
    await primary.stop();
    for (let i = 0; i < 6; i++) await query(i);
    expect(answeredBy).toEqual(Array(6).fill('secondary'));

    // Phase 2: primary back behind a proxy that answers HTML 502.
    primary.setFaults({ errorRate: 1, error: { type: 'html' } });
    await primary.start();
    await wait(320);
    for (let i = 0; i < 6; i++) await query(i);
    expect(answeredBy.slice(6)).toEqual(Array(6).fill('secondary'));
    // Only recovery probes reached the primary (one per cooldown; normally exactly one), each got the 502.
    const probes = primary.stats().requests;
    expect(probes).toBeGreaterThanOrEqual(1);
    expect(probes).toBeLessThanOrEqual(2);
    expect(primary.stats().faults.error).toBe(probes);

    // Phase 3: primary healthy again; after the cooldown one probe brings traffic back.
    primary.setFaults({});
    await wait(320);
    const before = secondary.stats().calls;
    for (let i = 0; i < 6; i++) await query(i);
    expect(answeredBy.slice(12)).toEqual(Array(6).fill('primary'));
    expect(secondary.stats().calls).toBe(before);
    // The first of these was the recovery probe; all six went to the primary.
    expect(primary.stats().requests).toBe(probes + 6);
  });

  it('does not fail over a 4xx domain error, and a mutation only when it never left', async () => {
    const { primary, secondary, client } = await failoverPair();
    const bad = await errorOf(client.fail.query({ code: 'BAD_REQUEST' }));
    expect(bad).toBeInstanceOf(TRPCClientError);
    expect((bad as TRPCClientError<ChaosTrpcRouter>).data?.code).toBe('BAD_REQUEST');
    expect(secondary.stats().requests).toBe(0);

    primary.setFaults({ errorRate: 1 });
    await errorOf(client.counter.increment.mutate({ by: 1 }));
    expect(secondary.stats().requests).toBe(0);

    await primary.stop();
    // Let the client see its pooled connection closed: a request written on a dying
    // socket (UND_ERR_SOCKET) may have been received, so it must not fail over.
    await wait(50);
    await expect(client.counter.increment.mutate({ by: 1 })).resolves.toBe(1);
    expect(secondary.stats().procedures['counter.increment']).toBe(1);
  });

  it('does not re-run on the secondary a mutation a proxy answered with 502 (it may have run)', async () => {
    const { primary, secondary, client } = await failoverPair();
    primary.setFaults({ errorRate: 1, error: { type: 'html' } });
    const error = await errorOf(client.counter.increment.mutate({ by: 1 }));
    expect((error as TRPCClientError<ChaosTrpcRouter>).data?.code).toBe('BAD_GATEWAY');
    expect(primary.stats().requests).toBe(1);
    expect(secondary.stats().requests).toBe(0);
  });

  it('fails a 502 mutation over only when the user marked it idempotent', async () => {
    const { primary, secondary, client } = await failoverPair({
      idempotent: (op) => op.path === 'counter.increment',
    });
    primary.setFaults({ errorRate: 1, error: { type: 'html' } });
    await expect(client.counter.increment.mutate({ by: 1 })).resolves.toBe(1);
    expect(secondary.stats().procedures['counter.increment']).toBe(1);
  });

  it('fails over a mutation whose request never left (connection refused)', async () => {
    const { primary, secondary, client } = await failoverPair();
    await primary.stop();
    await expect(client.counter.increment.mutate({ by: 5 })).resolves.toBe(5);
    expect(secondary.stats().procedures['counter.increment']).toBe(1);
  });

  it('rejects with the last endpoint error as TRPCClientError when every endpoint fails', async () => {
    const { primary, secondary, client } = await failoverPair();
    primary.setFaults({ errorRate: 1 });
    secondary.setFaults({ errorRate: 1 });
    const error = await errorOf(client.echo.query('x'));
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<ChaosTrpcRouter>).data?.code).toBe('SERVICE_UNAVAILABLE');
    expect((error as TRPCClientError<ChaosTrpcRouter>).meta?.routing).toBeDefined();
  });

  it('sends a mutation to one server in every selection mode, raced or hedged (a query races to all)', async () => {
    const servers = [
      await chaos({ name: 'a' }),
      await chaos({ name: 'b' }),
      await chaos({ name: 'c' }),
    ];
    const modes: Pick<RoutingLinkOptions<ChaosTrpcRouter>, 'selection' | 'hedge'>[] = [
      { selection: { type: 'race' } },
      { selection: 'race' },
      { selection: 'round-robin', hedge: { delayMs: 1 } },
      { selection: 'power-of-two' },
    ];
    const count = (path: string) =>
      servers.reduce((n, s) => n + (s.stats().procedures[path] ?? 0), 0);
    for (const [i, mode] of modes.entries()) {
      const client = clientOf([
        routingLink<ChaosTrpcRouter>({
          ...mode,
          endpoints: servers.map((s) => ({ id: s.stats().server, link: batchLink(s.url) })),
        }),
      ]);
      await client.counter.increment.mutate({ by: 1 });
      expect({ mode: i, executions: count('counter.increment') }).toEqual({
        mode: i,
        executions: i + 1,
      });
    }
    // The race is on for queries: each of them went to all three servers.
    const client = clientOf([
      routingLink<ChaosTrpcRouter>({
        selection: { type: 'race' },
        endpoints: servers.map((s) => ({ id: s.stats().server, link: batchLink(s.url) })),
      }),
    ]);
    await client.echo.query('q');
    await wait(50);
    expect(count('echo')).toBe(3);
  });

  it('sends nothing for a call whose signal is already aborted, and rejects as resilienceLink does', async () => {
    const servers = [await chaos({ name: 'a' }), await chaos({ name: 'b' })];
    for (const selection of ['priority', 'race'] as const) {
      const client = clientOf([
        routingLink<ChaosTrpcRouter>({
          selection,
          endpoints: servers.map((s) => ({ id: s.stats().server, link: batchLink(s.url) })),
        }),
      ]);
      const reason = new Error('caller gave up');
      const mutation = await errorOf(
        client.counter.increment.mutate({ by: 1 }, { signal: AbortSignal.abort(reason) }),
      );
      const query = await errorOf(client.echo.query('x', { signal: AbortSignal.abort() }));
      expect(mutation).toBeInstanceOf(TRPCClientError);
      expect((mutation as Error).cause).toBe(reason);
      expect(query).toBeInstanceOf(TRPCClientError);
    }
    await wait(50);
    expect(servers.map((s) => s.stats().requests)).toEqual([0, 0]);
  });

  it('ends a call to a stalled server at the standard 30 s deadline (per call: context.timeoutMs)', async () => {
    const server = await chaos({ faults: { hangRate: 1 } });
    const clock = createManualClock(1_000);
    const client = clientOf([
      routingLink<ChaosTrpcRouter>({
        endpoints: [{ id: 'stalled', link: batchLink(server.url) }],
        clock,
        sleep: clock.sleep,
      }),
    ]);
    const settled = async (p: Promise<unknown>, requests: number) => {
      let done = false;
      const error = errorOf(p).finally(() => {
        done = true;
      });
      while (server.stats().requests < requests) await wait(5);
      return { error, done: () => done };
    };
    const call = await settled(client.echo.query('x'), 1);
    clock.advance(29_999);
    await clock.flush();
    await wait(20);
    expect(call.done()).toBe(false);
    clock.advance(1);
    await clock.flush();
    await wait(20);
    expect(call.done()).toBe(true);
    const error = await call.error;
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as Error).message).toMatch(
      /Deadline of 30000 ms exceeded calling "echo" \(timeout\)/,
    );
    expect(isDeadlineExceededError((error as Error).cause)).toBe(true);

    const short = await settled(client.echo.query('y', { context: { timeoutMs: 500 } }), 2);
    clock.advance(500);
    await clock.flush();
    await wait(20);
    expect(short.done()).toBe(true);
    expect(server.stats().requests).toBe(2);
  });
});
