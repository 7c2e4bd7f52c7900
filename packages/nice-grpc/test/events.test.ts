import { ECHO_METHODS } from '@breakwater/chaos';
import type { ResilienceEvent } from '@breakwater/core';
import { fixedRandom } from '@breakwater/core/time';
import { Status } from 'nice-grpc';
import { describe, expect, it } from 'vitest';
import { resilienceMiddleware } from '../src/index.js';
import { callId, chaosServer, echoClient, rejection } from './helpers.js';

const fast = { baseDelayMs: 5, random: fixedRandom(0) };

describe('onEvent in nice-grpc', () => {
  it('retry ×2 with attempts and method, the circuit opening, a circuit-open refusal', async () => {
    const events: ResilienceEvent[] = [];
    const server = await chaosServer({
      faults: [{ status: Status.UNAVAILABLE, firstAttempts: 2 }],
    });
    const client = echoClient(
      server.address,
      resilienceMiddleware({
        timeoutMs: false,
        attemptTimeoutMs: false,
        budget: false,
        retry: { attempts: 3, backoff: fast },
        circuit: { failureThreshold: 1, window: false, openDurationMs: 30_000 },
        onEvent: (e) => {
          events.push(e);
          // A throwing listener breaks no call.
          throw new Error('listener bug');
        },
      }),
    );
    await expect(client.Unary({ message: 'hi' }, callId('twice'))).resolves.toMatchObject({
      attempt: 3,
    });
    expect(server.attempts('twice')).toBe(3);
    expect(events.map((e) => e.kind === 'retry' && [e.attempt, e.method])).toEqual([
      [1, ECHO_METHODS.unary],
      [2, ECHO_METHODS.unary],
    ]);

    events.length = 0;
    server.setFaults([{ status: Status.UNAVAILABLE }]);
    expect((await rejection(client.Unary({}, callId('down')))).code).toBe(Status.UNAVAILABLE);
    expect(server.attempts('down')).toBe(3);
    expect(events.filter((e) => e.kind === 'circuit')).toEqual([
      expect.objectContaining({ method: ECHO_METHODS.unary, from: 'closed', to: 'open' }),
    ]);

    events.length = 0;
    await rejection(client.Unary({}, callId('refused')));
    expect(server.attempts('refused')).toBe(0);
    expect(events).toEqual([
      expect.objectContaining({
        kind: 'refused',
        method: ECHO_METHODS.unary,
        reason: 'circuit-open',
      }),
    ]);
  });
});
