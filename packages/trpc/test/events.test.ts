import type { ChaosTrpcRouter } from '@breakwater/chaos';
import type { ResilienceEvent } from '@breakwater/core';
import { fixedRandom } from '@breakwater/core/time';
import { describe, expect, it } from 'vitest';
import { resilienceLink, routingLink } from '../src/index.js';
import { batchLink, chaos, clientOf, errorOf } from './helpers.js';

const fast = { baseDelayMs: 5, random: fixedRandom(0) };

describe('onEvent in resilienceLink (real tRPC server)', () => {
  it('retries with attempt and procedure, the circuit opening, a circuit-open refusal', async () => {
    const events: ResilienceEvent[] = [];
    const server = await chaos({ faults: { errorRate: 1 } });
    // A throwing listener breaks no call.
    const onEvent = (e: ResilienceEvent) => {
      events.push(e);
      throw new Error('listener bug');
    };
    const circuit = { failureThreshold: 1, window: false, openDurationMs: 30_000 } as const;
    const link = resilienceLink({
      budget: false,
      retry: { attempts: 3, backoff: fast },
      circuit,
      onEvent,
    });
    const client = clientOf([link, batchLink(server.url)]);
    await errorOf(client.echo.query('down'));
    expect(server.stats().procedures.echo).toBe(3);
    expect(
      events
        .filter((e) => e.kind === 'retry')
        .map((e) => e.kind === 'retry' && [e.attempt, e.method]),
    ).toEqual([
      [1, 'echo'],
      [2, 'echo'],
    ]);
    expect(events.filter((e) => e.kind === 'circuit')).toEqual([
      expect.objectContaining({ method: 'echo', from: 'closed', to: 'open' }),
    ]);
    events.length = 0;
    await errorOf(client.echo.query('refused'));
    expect(server.stats().procedures.echo).toBe(3);
    expect(events).toEqual([
      expect.objectContaining({ kind: 'refused', method: 'echo', reason: 'circuit-open' }),
    ]);
  });
});

describe('onEvent in routingLink (real tRPC servers)', () => {
  const pair = async (onEvent: (e: ResilienceEvent) => void, hedge?: { delayMs: number }) => {
    const primary = await chaos({ name: 'primary' });
    const secondary = await chaos({ name: 'secondary' });
    const client = clientOf([
      routingLink<ChaosTrpcRouter>({
        endpoints: [
          { id: 'primary', link: batchLink(primary.url) },
          { id: 'secondary', link: batchLink(secondary.url) },
        ],
        selection: 'priority',
        protection: { circuit: { failureThreshold: 1, window: false, openDurationMs: 30_000 } },
        ...(hedge === undefined ? {} : { hedge }),
        onEvent,
      }),
    ]);
    return { primary, secondary, client };
  };

  it('a failover names the procedure and both endpoints; the circuit opening names its endpoint', async () => {
    const events: ResilienceEvent[] = [];
    const { primary, secondary, client } = await pair((e) => events.push(e));
    primary.setFaults({ errorRate: 1 });

    await expect(client.echo.query('x')).resolves.toMatchObject({ server: 'secondary' });
    expect(primary.stats().procedures.echo).toBe(1);
    expect(secondary.stats().procedures.echo).toBe(1);
    expect(events).toContainEqual(
      expect.objectContaining({
        kind: 'failover',
        method: 'echo',
        from: 'primary',
        to: 'secondary',
      }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ kind: 'circuit', target: 'primary', from: 'closed', to: 'open' }),
    );
    events.length = 0;
    // The open circuit passes the primary over: the next call goes straight to the secondary.
    await expect(client.slow.query({ ms: 0 })).resolves.toMatchObject({ server: 'secondary' });
    expect(primary.stats().procedures.slow).toBeUndefined();
    expect(events.filter((e) => e.kind === 'failover')).toEqual([]);
  });

  it('a hedge names the procedure; the servers both saw the call', async () => {
    const events: ResilienceEvent[] = [];
    const { primary, secondary, client } = await pair((e) => events.push(e), { delayMs: 20 });
    primary.setFaults({ latency: { kind: 'fixed', ms: 400 } });

    await expect(client.echo.query('h')).resolves.toMatchObject({ server: 'secondary' });
    expect(secondary.stats().procedures.echo).toBe(1);
    expect(primary.stats().requests).toBe(1);
    expect(events).toContainEqual(
      expect.objectContaining({ kind: 'hedge', method: 'echo', attempt: 2 }),
    );
  });
});
