import {
  createCircuitBreaker,
  createTokenBucket,
  isCircuitOpenError,
  isQueueFullError,
  isRateLimitError,
} from '@breakwater/core';
import { Status } from 'nice-grpc';
import { describe, expect, it } from 'vitest';
import { resilienceMiddleware } from '../src/index.js';
import { callId, chaosServer, echoClient, rejection, sleep } from './helpers.js';

// resilienceMiddleware's circuit, rate limit and concurrency stages in a row: refusals
// and the slots and permits a failed call gives back.
describe('resilienceMiddleware: circuit, rate limit and concurrency', () => {
  it('an open circuit refuses before a token or a slot is spent; failures give back slot and permit', async () => {
    const server = await chaosServer({ faults: [{ status: Status.UNAVAILABLE }] });
    const breaker = createCircuitBreaker({
      failureSpanMs: 0,
      failureThreshold: 3,
      openDurationMs: 60_000,
    });
    const bucket = createTokenBucket({ capacity: 100, refillPerSecond: 0.001 });
    const client = echoClient(
      server.address,
      resilienceMiddleware({
        circuit: breaker,
        rateLimit: bucket,
        concurrency: { limit: 1 },
        retry: false,
      }),
    );
    for (let i = 0; i < 3; i++) {
      // The failed call gave its one slot back: the next one is not refused for want of it.
      expect((await rejection(client.Unary({}))).code).toBe(Status.UNAVAILABLE);
    }
    expect(breaker.state).toBe('open');
    expect(bucket.available()).toBe(97);
    const refused = await rejection(client.Unary({}));
    expect(refused.code).toBe(Status.UNAVAILABLE);
    expect(isCircuitOpenError(refused.cause)).toBe(true);
    expect(bucket.available()).toBe(97);
    expect(server.total()).toBe(3);
  });

  it('a rate-limit or bulkhead refusal is neutral for the circuit; the server never sees it', async () => {
    const server = await chaosServer({ faults: [{ latency: { kind: 'fixed', ms: 150 } }] });
    const breaker = createCircuitBreaker({
      failureSpanMs: 0,
      failureThreshold: 1,
      openDurationMs: 60_000,
    });
    const bucket = createTokenBucket({ capacity: 2, refillPerSecond: 0.001 });
    const client = echoClient(
      server.address,
      resilienceMiddleware({ circuit: breaker, rateLimit: bucket, concurrency: { limit: 1 } }),
    );
    const first = client.Unary({});
    const full = await rejection(client.Unary({}));
    expect(full.code).toBe(Status.RESOURCE_EXHAUSTED);
    expect(isQueueFullError(full.cause)).toBe(true);
    await first;
    const limited = await rejection(client.Unary({}));
    expect(limited.code).toBe(Status.RESOURCE_EXHAUSTED);
    expect(isRateLimitError(limited.cause)).toBe(true);
    expect(breaker.state).toBe('closed');
    expect(server.total()).toBe(1);
  });

  it('a call that waits for a slot runs when one frees; aborted while queued, it leaves at once', async () => {
    const server = await chaosServer({ faults: [{ latency: { kind: 'fixed', ms: 200 } }] });
    const breaker = createCircuitBreaker({
      failureSpanMs: 0,
      failureThreshold: 1,
      openDurationMs: 60_000,
    });
    const client = echoClient(
      server.address,
      resilienceMiddleware({ circuit: breaker, concurrency: { limit: 1, maxQueue: 5 } }),
    );
    const first = client.Unary({});
    const waiting = client.Unary({});
    const controller = new AbortController();
    const aborted = rejection(client.Unary({}, { signal: controller.signal }));
    await sleep(20);
    const started = performance.now();
    controller.abort();
    expect((await aborted).name).toBe('AbortError');
    expect(performance.now() - started).toBeLessThan(100);
    await first;
    await waiting;
    expect(server.total()).toBe(2);
    // Every slot came back: a full queue's worth of calls runs again.
    await Promise.all(Array.from({ length: 6 }, () => client.Unary({})));
    // Caller cancellation did not count against the circuit.
    expect(breaker.state).toBe('closed');
  });

  it('with no options is the standard stack: deadline sent, retries with a budget, idempotent only', async () => {
    const server = await chaosServer({
      faults: [{ status: Status.UNAVAILABLE, firstAttempts: 2 }],
    });
    const client = echoClient(server.address, resilienceMiddleware({ onWarning: () => {} }));
    const reply = await client.Unary({}, callId('std'));
    expect(reply.attempt).toBe(3);
    const seen = server.observed.filter((o) => o.callId === 'std');
    // 30 s for the call, 10 s for each attempt: the attempt deadline is what the server sees.
    for (const o of seen) expect(o.deadlineRemainingMs).toBeLessThanOrEqual(10_000);
    expect(seen[0]?.deadlineRemainingMs).toBeGreaterThan(5_000);
    // Three attempts is the standard limit; a method not known idempotent is not repeated.
    server.setFaults([{ status: Status.UNAVAILABLE }]);
    expect((await rejection(client.Unary({}, callId('std-3')))).code).toBe(Status.UNAVAILABLE);
    expect(server.attempts('std-3')).toBe(3);
    expect((await rejection(client.UnaryUnsafe({}, callId('std-u')))).code).toBe(
      Status.UNAVAILABLE,
    );
    expect(server.attempts('std-u')).toBe(1);
  });

  it('each standard part turns off with false', async () => {
    const server = await chaosServer({
      faults: [{ status: Status.UNAVAILABLE, firstAttempts: 1 }],
    });
    const client = echoClient(
      server.address,
      resilienceMiddleware({
        timeoutMs: false,
        attemptTimeoutMs: false,
        retry: false,
        circuit: false,
      }),
    );
    expect((await rejection(client.Unary({}, callId('off')))).code).toBe(Status.UNAVAILABLE);
    expect(server.attempts('off')).toBe(1);
    expect(server.observed[0]?.deadline).toBeUndefined();
  });
});
