import {
  createRetryBudget,
  createTokenBucket,
  isCircuitOpenError,
  isQueueFullError,
  isRateLimitError,
} from '@breakwater/core';
import { ClientError, Status } from 'nice-grpc';
import { describe, expect, it } from 'vitest';
import {
  bulkheadMiddleware,
  circuitBreakerMiddleware,
  hedgingMiddleware,
  rateLimitMiddleware,
  resilienceMiddleware,
} from '../src/index.js';
import { callId, chaosServer, echoClient, rejection, sleep } from './helpers.js';

describe('circuitBreakerMiddleware against a chaos server', () => {
  it('opens after the threshold (the server stops receiving calls), then lets exactly one probe through', async () => {
    const server = await chaosServer({ faults: [{ status: Status.UNAVAILABLE }] });
    const breaker = circuitBreakerMiddleware({
      failureSpanMs: 0,
      failureThreshold: 3,
      openDurationMs: 300,
    });
    const client = echoClient(server.address, breaker);
    for (let i = 0; i < 3; i++) {
      expect((await rejection(client.Unary({}))).code).toBe(Status.UNAVAILABLE);
    }
    expect(server.total()).toBe(3);
    const refused = await rejection(client.Unary({}));
    expect(refused).toBeInstanceOf(ClientError);
    expect(refused.code).toBe(Status.UNAVAILABLE);
    expect(isCircuitOpenError(refused.cause)).toBe(true);
    expect(server.total()).toBe(3);

    await sleep(320);
    server.setFaults([{ latency: { kind: 'fixed', ms: 100 } }]);
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => client.Unary({})));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(server.total()).toBe(4);
    expect(breaker.circuitFor('/breakwater.chaos.v1.Echo/Unary').state).toBe('closed');
    await client.Unary({});
    expect(server.total()).toBe(5);
  });

  it('does not count INVALID_ARGUMENT or caller cancellation', async () => {
    const server = await chaosServer({ faults: [{ status: Status.INVALID_ARGUMENT }] });
    const breaker = circuitBreakerMiddleware({ failureSpanMs: 0, failureThreshold: 2 });
    const client = echoClient(server.address, breaker);
    for (let i = 0; i < 4; i++) await rejection(client.Unary({}));
    server.setFaults([{ hang: true }]);
    for (let i = 0; i < 3; i++) {
      const controller = new AbortController();
      const pending = rejection(client.Unary({}, { signal: controller.signal }));
      // Abort once the server holds the call (on a loaded machine it may take a while to arrive).
      while (server.total() < 5 + i) await sleep(5);
      controller.abort();
      expect((await pending).name).toBe('AbortError');
    }
    expect(breaker.circuitFor('/breakwater.chaos.v1.Echo/Unary').state).toBe('closed');
    expect(server.total()).toBe(7);
  });
});

describe('rateLimitMiddleware and bulkheadMiddleware', () => {
  it('refuses beyond the bucket with RESOURCE_EXHAUSTED (cause RateLimitError); the server never sees it', async () => {
    const server = await chaosServer();
    const bucket = createTokenBucket({ capacity: 2, refillPerSecond: 0.001 });
    const client = echoClient(server.address, rateLimitMiddleware(bucket));
    await client.Unary({});
    await client.Unary({});
    const error = await rejection(client.Unary({}));
    expect(error.code).toBe(Status.RESOURCE_EXHAUSTED);
    expect(isRateLimitError(error.cause)).toBe(true);
    expect(server.total()).toBe(2);
  });

  it('refuses when every slot is busy and the queue is full (cause QueueFullError)', async () => {
    const server = await chaosServer({ faults: [{ latency: { kind: 'fixed', ms: 150 } }] });
    const client = echoClient(server.address, bulkheadMiddleware({ limit: 1 }));
    const first = client.Unary({});
    const error = await rejection(client.Unary({}));
    expect(error.code).toBe(Status.RESOURCE_EXHAUSTED);
    expect(isQueueFullError(error.cause)).toBe(true);
    await first;
    expect(server.total()).toBe(1);
  });

  it('a queued call whose signal aborts leaves the queue at once with AbortError', async () => {
    const server = await chaosServer({ faults: [{ latency: { kind: 'fixed', ms: 300 } }] });
    const client = echoClient(server.address, bulkheadMiddleware({ limit: 1, maxQueue: 5 }));
    const first = client.Unary({});
    const controller = new AbortController();
    const queued = rejection(client.Unary({}, { signal: controller.signal }));
    await sleep(20);
    const started = performance.now();
    controller.abort();
    const error = await queued;
    expect(error.name).toBe('AbortError');
    expect(performance.now() - started).toBeLessThan(100);
    await first;
    expect(server.total()).toBe(1);
  });

  it('a server stream holds its slot until it ends', async () => {
    const server = await chaosServer({
      faults: [{ methods: ['ServerStream'], latency: { kind: 'fixed', ms: 100 } }],
    });
    const client = echoClient(server.address, bulkheadMiddleware({ limit: 1 }));
    const stream = client.ServerStream({ count: 2 })[Symbol.asyncIterator]();
    await stream.next();
    expect((await rejection(client.Unary({}))).code).toBe(Status.RESOURCE_EXHAUSTED);
    while (!(await stream.next()).done) {
      // drain
    }
    await client.Unary({});
  });
});

describe('hedgingMiddleware', () => {
  it('a slow first attempt is overtaken by a hedge; the loser is cancelled', async () => {
    const server = await chaosServer({
      faults: [{ firstAttempts: 1, latency: { kind: 'fixed', ms: 1_000 } }],
    });
    const client = echoClient(server.address, hedgingMiddleware({ delayMs: 50 }));
    const started = performance.now();
    const reply = await client.Unary({}, callId('h'));
    expect(performance.now() - started).toBeLessThan(600);
    expect(reply.attempt).toBe(2);
    expect(server.attempts('h')).toBe(2);
    expect(server.observed[1]?.previousAttempts).toBe(1);
    await sleep(50);
    expect(server.observed[0]?.outcome).toBe('CANCELLED');
  });

  it('never hedges a method not marked idempotent', async () => {
    const server = await chaosServer({ faults: [{ latency: { kind: 'fixed', ms: 150 } }] });
    const client = echoClient(server.address, hedgingMiddleware({ delayMs: 20 }));
    await client.UnaryUnsafe({}, callId('u'));
    expect(server.attempts('u')).toBe(1);
  });

  it('a non-retryable failure ends the hedged call at once', async () => {
    const server = await chaosServer({ faults: [{ status: Status.INVALID_ARGUMENT }] });
    const client = echoClient(server.address, hedgingMiddleware({ delayMs: 200, attempts: 3 }));
    expect((await rejection(client.Unary({}, callId('x')))).code).toBe(Status.INVALID_ARGUMENT);
    expect(server.attempts('x')).toBe(1);
  });

  it('in resilienceMiddleware a hedged call is not also retried', async () => {
    const server = await chaosServer({ faults: [{ status: Status.UNAVAILABLE }] });
    const client = echoClient(
      server.address,
      resilienceMiddleware({
        hedge: { delayMs: 500, attempts: 2 },
        retry: { attempts: 5, backoff: { baseDelayMs: 1, jitter: 'none' } },
      }),
    );
    expect((await rejection(client.Unary({}, callId('both')))).code).toBe(Status.UNAVAILABLE);
    expect(server.attempts('both')).toBe(2);
  });

  it('a hedge draws on the budget: with none left the slow attempt runs alone', async () => {
    const server = await chaosServer({ faults: [{ latency: { kind: 'fixed', ms: 200 } }] });
    // No hedge reserve: the one retry of the window may go to a hedge.
    const budget = createRetryBudget({
      ratio: 0,
      minRetriesPerSecond: 0.1,
      ttlMs: 10_000,
      hedgeReserve: 0,
    });
    const client = echoClient(server.address, hedgingMiddleware({ delayMs: 20, budget }));
    await client.Unary({}, callId('h1'));
    await client.Unary({}, callId('h2'));
    // The floor allowed one hedge over ten seconds: the first call's.
    expect([server.attempts('h1'), server.attempts('h2')]).toEqual([2, 1]);
    expect(budget.stats().retries).toBe(1);
  });
});
