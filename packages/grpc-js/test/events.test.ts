import { ECHO_METHODS, echoUnary, loadEchoPackageDefinition } from '@breakwater/chaos';
import type { ResilienceEvent } from '@breakwater/core';
import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { idempotentMethods } from '../src/index.js';
import { echoSetup, only } from './helpers.js';
import { routingSetup } from './routing-helpers.js';

const idempotent = idempotentMethods(loadEchoPackageDefinition());
const fast = { baseDelayMs: 5, jitter: 'none' } as const;

describe('onEvent in grpc-js', () => {
  it('interceptor: retry ×2 with attempts and method, the circuit opening, a circuit-open refusal', async () => {
    const events: ResilienceEvent[] = [];
    const { server, client } = await echoSetup(
      [
        only({
          idempotent,
          retry: { attempts: 3, backoff: fast },
          circuit: { failureThreshold: 1, window: false, openDurationMs: 30_000 },
          onEvent: (e) => events.push(e),
        }),
      ],
      { faults: [{ firstAttempts: 2, status: status.UNAVAILABLE }] },
    );
    const ok = await echoUnary(client, { message: 'hi' }, { callId: 'twice' });
    expect(ok.ok).toBe(true);
    expect(server.attempts('twice')).toBe(3);
    expect(events.map((e) => e.kind === 'retry' && [e.attempt, e.method, e.reason])).toEqual([
      [1, ECHO_METHODS.unary, 'UNAVAILABLE'],
      [2, ECHO_METHODS.unary, 'UNAVAILABLE'],
    ]);

    events.length = 0;
    server.setFaults([{ status: status.UNAVAILABLE }]);
    const failed = await echoUnary(client, { message: 'hi' }, { callId: 'down' });
    expect(failed.error?.code).toBe(status.UNAVAILABLE);
    expect(server.attempts('down')).toBe(3);
    expect(events.filter((e) => e.kind === 'circuit')).toEqual([
      expect.objectContaining({ method: ECHO_METHODS.unary, from: 'closed', to: 'open' }),
    ]);

    events.length = 0;
    const refused = await echoUnary(client, { message: 'hi' }, { callId: 'refused' });
    expect(refused.error?.code).toBe(status.UNAVAILABLE);
    expect(server.attempts('refused')).toBe(0);
    expect(events.map((e) => e.kind === 'refused' && [e.method, e.reason])).toEqual([
      [ECHO_METHODS.unary, 'circuit-open'],
    ]);
  });

  it('a throwing listener breaks no call', async () => {
    const { server, client } = await echoSetup(
      [
        only({
          idempotent,
          retry: { attempts: 2, backoff: fast },
          onEvent: () => {
            throw new Error('listener bug');
          },
        }),
      ],
      { faults: [{ firstAttempts: 1, status: status.UNAVAILABLE }] },
    );
    const outcome = await echoUnary(client, { message: 'hi' }, { callId: 'k' });
    expect(outcome.ok).toBe(true);
    expect(server.attempts('k')).toBe(2);
  });

  it('routing channel: a failover names both targets, a target circuit opening names it', async () => {
    const events: ResilienceEvent[] = [];
    const { servers, client } = await routingSetup(
      [{ faults: [{ status: status.UNAVAILABLE }] }, {}],
      {
        idempotent,
        protection: { retry: false },
        circuit: { failureThreshold: 1, window: false, openDurationMs: 30_000 },
        onEvent: (e) => events.push(e),
      },
    );
    const outcome = await echoUnary(client, { message: 'hi' }, { callId: 'f' });
    expect(outcome.value?.replica).toBe('replica-2');
    expect([servers[0]?.attempts('f'), servers[1]?.attempts('f')]).toEqual([1, 1]);
    expect(events).toContainEqual(
      expect.objectContaining({
        kind: 'failover',
        method: ECHO_METHODS.unary,
        from: 'replica-1',
        to: 'replica-2',
      }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ kind: 'circuit', target: 'replica-1', to: 'open' }),
    );
  });

  it('routing channel: a hedge is told', async () => {
    const events: ResilienceEvent[] = [];
    const { servers, client } = await routingSetup(
      [{ faults: [{ latency: { kind: 'fixed', ms: 500 } }] }, {}],
      { idempotent, hedge: { delayMs: 20 }, onEvent: (e) => events.push(e) },
    );
    const outcome = await echoUnary(client, { message: 'hi' }, { callId: 'h' });
    expect(outcome.value?.replica).toBe('replica-2');
    expect(servers[1]?.attempts('h')).toBe(1);
    expect(events).toContainEqual(
      expect.objectContaining({ kind: 'hedge', method: ECHO_METHODS.unary, attempt: 2 }),
    );
  });
});
