import { echoBidi, echoUnary, loadEchoPackageDefinition } from '@breakwater/chaos';
import {
  isCircuitOpenError,
  isDeadlineExceededError,
  isQueueFullError,
  isRateLimitError,
} from '@breakwater/core';
import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { breakwaterCause, idempotentMethods, resilienceInterceptor } from '../src/index.js';
import { echoSetup, only } from './helpers.js';

const idempotent = idempotentMethods(loadEchoPackageDefinition());

describe('timeoutMs', () => {
  it('a slow server yields DEADLINE_EXCEEDED on time; the server saw the budget', async () => {
    const { server, client } = await echoSetup([only({ timeoutMs: 150 })], {
      faults: [{ latency: { kind: 'fixed', ms: 2_000 } }],
    });
    const t0 = performance.now();
    const outcome = await echoUnary(client, {});
    const took = performance.now() - t0;
    expect(outcome.error?.code).toBe(status.DEADLINE_EXCEEDED);
    expect(took).toBeGreaterThanOrEqual(140);
    expect(took).toBeLessThan(600);
    expect(server.observed[0]?.deadlineRemainingMs).toBeLessThanOrEqual(150);
  });

  it('a deadline that runs out has the core DeadlineExceededError as cause (as in nice-grpc)', async () => {
    const { client } = await echoSetup([only({ timeoutMs: 150 })], {
      faults: [{ latency: { kind: 'fixed', ms: 2_000 } }],
    });
    const outcome = await echoUnary(client, {});
    expect(outcome.error?.code).toBe(status.DEADLINE_EXCEEDED);
    const cause = breakwaterCause(outcome.error);
    expect(isDeadlineExceededError(cause)).toBe(true);
    expect((outcome.error as ServiceError & { cause: unknown }).cause).toBe(cause);
  });

  it('the server’s DEADLINE_EXCEEDED arriving first gets the same shape', async () => {
    // The server ends the call with DEADLINE_EXCEEDED at once: its timer "fired first".
    const { client } = await echoSetup([only({ timeoutMs: 5_000 })], {
      faults: [{ status: status.DEADLINE_EXCEEDED }],
    });
    const outcome = await echoUnary(client, {});
    expect(outcome.error?.code).toBe(status.DEADLINE_EXCEEDED);
    expect(isDeadlineExceededError(breakwaterCause(outcome.error))).toBe(true);
    // An earlier caller deadline is the call's deadline too.
    const early = await echoUnary(client, {}, { callOptions: { deadline: Date.now() + 1_000 } });
    expect(isDeadlineExceededError(breakwaterCause(early.error))).toBe(true);
  });

  it('calls with no deadline part are left alone', async () => {
    const { client } = await echoSetup([only({})], {
      faults: [{ status: status.DEADLINE_EXCEEDED }],
    });
    const outcome = await echoUnary(client, {});
    expect(outcome.error?.code).toBe(status.DEADLINE_EXCEEDED);
    expect(breakwaterCause(outcome.error)).toBeUndefined();
  });

  it('keeps an earlier caller deadline', async () => {
    const { server, client } = await echoSetup([only({ timeoutMs: 10_000 })]);
    const deadline = Date.now() + 1_000;
    await echoUnary(client, {}, { callOptions: { deadline } });
    // grpc-timeout is relative: the server sees the caller's remaining time, not the 10 s budget.
    expect(server.observed[0]?.deadlineRemainingMs as number).toBeLessThanOrEqual(1_000);
  });
});

describe('circuit', () => {
  it('stops sending after the threshold; after cooldown exactly one probe reaches the server', async () => {
    const circuit = only({
      circuit: { failureSpanMs: 0, failureThreshold: 3, openDurationMs: 200 },
    });
    const { server, client } = await echoSetup([circuit], {
      faults: [{ status: status.UNAVAILABLE }],
    });
    for (let i = 0; i < 3; i++)
      expect((await echoUnary(client, {})).error?.code).toBe(status.UNAVAILABLE);
    expect(server.total()).toBe(3);

    const refused = await echoUnary(client, {});
    expect(refused.error?.code).toBe(status.UNAVAILABLE);
    const cause = breakwaterCause(refused.error);
    expect(isCircuitOpenError(cause)).toBe(true);
    expect((refused.error as ServiceError & { cause: unknown }).cause).toBe(cause);
    expect(server.total()).toBe(3);

    await new Promise((r) => setTimeout(r, 250));
    server.setFaults([{ latency: { kind: 'fixed', ms: 100 } }]);
    const burst = await Promise.all(Array.from({ length: 5 }, () => echoUnary(client, {})));
    expect(server.total()).toBe(4);
    expect(burst.filter((o) => o.ok)).toHaveLength(1);
    expect(circuit.circuitFor('/breakwater.chaos.v1.Echo/Unary')?.state).toBe('closed');
  });

  it('does not count caller errors', async () => {
    const circuit = only({ circuit: { failureSpanMs: 0, failureThreshold: 2 } });
    const { server, client } = await echoSetup([circuit], {
      faults: [{ status: status.INVALID_ARGUMENT }],
    });
    for (let i = 0; i < 4; i++) await echoUnary(client, {});
    expect(server.total()).toBe(4);
  });

  it('guards client and bidi streams too, with the deadline applied', async () => {
    const stack = resilienceInterceptor({
      timeoutMs: 2_000,
      circuit: { failureSpanMs: 0, failureThreshold: 1, openDurationMs: 60_000 },
    });
    const { server, client } = await echoSetup([stack], {
      faults: [{ methods: ['ClientStream'], status: status.UNAVAILABLE }],
    });
    const clientStream = () =>
      new Promise<ServiceError | null>((resolve) => {
        const call = client.ClientStream(new Metadata(), (e) => resolve(e));
        call.write({ message: 'a' });
        call.end();
      });
    expect((await clientStream())?.code).toBe(status.UNAVAILABLE);
    const refused = await clientStream();
    expect(isCircuitOpenError(breakwaterCause(refused))).toBe(true);
    expect(server.total('ClientStream')).toBe(1);

    const echoed = await echoBidi(client, ['x']);
    expect(echoed).toEqual(['x']);
    const bidi = server.observed.find((o) => o.method === 'Bidi');
    expect(bidi?.deadlineRemainingMs).toBeLessThanOrEqual(2_000);
  });
});

describe('rate limit and bulkhead', () => {
  it('refuses with RESOURCE_EXHAUSTED carrying the core error, without reaching the server', async () => {
    const { server, client } = await echoSetup([
      only({ rateLimit: { capacity: 2, refillPerSecond: 0.001 } }),
    ]);
    const outcomes = await Promise.all(Array.from({ length: 4 }, () => echoUnary(client, {})));
    expect(outcomes.filter((o) => o.ok)).toHaveLength(2);
    const refused = outcomes.find((o) => !o.ok)?.error;
    expect(refused?.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(isRateLimitError(breakwaterCause(refused))).toBe(true);
    expect(server.total()).toBe(2);
  });

  it('concurrency admits `limit` calls, queues `maxQueue`, refuses the rest', async () => {
    const { server, client } = await echoSetup([only({ concurrency: { limit: 2, maxQueue: 1 } })], {
      faults: [{ latency: { kind: 'fixed', ms: 100 } }],
    });
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => echoUnary(client, {})));
    expect(outcomes.filter((o) => o.ok)).toHaveLength(3);
    const refused = outcomes.filter((o) => !o.ok);
    expect(refused.every((o) => isQueueFullError(breakwaterCause(o.error)))).toBe(true);
    expect(refused[0]?.error?.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(server.total()).toBe(3);
  });

  it('a call queued for a slot leaves the queue at its deadline, while the slot is still held', async () => {
    const { server, client } = await echoSetup(
      [only({ timeoutMs: 5_000, concurrency: { limit: 1, maxQueue: 1 } })],
      { faults: [{ latency: { kind: 'fixed', ms: 1_000 } }] },
    );
    const holder = echoUnary(client, {}, { callId: 'holder' });
    await expect.poll(() => server.total()).toBe(1);
    const t0 = performance.now();
    // The caller's own deadline, earlier than `timeoutMs`: it runs out in the queue.
    const deadline = performance.timeOrigin + t0 + 200;
    const queued = await echoUnary(client, {}, { callId: 'queued', callOptions: { deadline } });
    const took = performance.now() - t0;
    expect(queued.error?.code).toBe(status.DEADLINE_EXCEEDED);
    expect(isDeadlineExceededError(breakwaterCause(queued.error))).toBe(true);
    // At its deadline, not when the holder gives the slot back (1 s).
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(700);
    expect((await holder).ok).toBe(true);
    expect(server.observed.map((o) => o.callId)).toEqual(['holder']);
  });
});

describe('hedge', () => {
  it('sends a hedge when the first attempt is slow; the first answer wins', async () => {
    const { server, client } = await echoSetup(
      [only({ idempotent, hedge: { delayMs: 50, attempts: 2 } })],
      {
        faults: [{ firstAttempts: 1, latency: { kind: 'fixed', ms: 1_000 } }],
      },
    );
    const t0 = performance.now();
    const outcome = await echoUnary(client, {}, { callId: 'h' });
    expect(outcome.value?.attempt).toBe(2);
    expect(performance.now() - t0).toBeLessThan(800);
    expect(server.attempts('h')).toBe(2);
    await expect.poll(() => server.observed[0]?.outcome).toBe('CANCELLED');
  });

  it('asks the budget for every hedge: a refused one is not sent', async () => {
    let asked = 0;
    const refusing = {
      recordRequest() {},
      tryRetry() {
        asked++;
        return false;
      },
    };
    const { server, client } = await echoSetup(
      [only({ idempotent, hedge: { delayMs: 20, attempts: 3 }, budget: refusing as never })],
      { faults: [{ firstAttempts: 1, latency: { kind: 'fixed', ms: 200 } }] },
    );
    const outcome = await echoUnary(client, {}, { callId: 'b' });
    expect(outcome.value?.attempt).toBe(1);
    expect(server.attempts('b')).toBe(1);
    expect(asked).toBeGreaterThanOrEqual(1);
  });
});
