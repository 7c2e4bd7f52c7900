import type { ResilienceEvent } from '@breakwater/core';
import { fixedRandom } from '@breakwater/core/time';
import { describe, expect, it } from 'vitest';
import { resilienceLink } from '../src/index.js';
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
