import {
  createCircuitBreaker,
  createPool,
  createTokenBucket,
  isCircuitOpenError,
  isQueueFullError,
  isRateLimitError,
} from '@breakwater/core';
import { Status } from 'nice-grpc';
import { describe, expect, it } from 'vitest';
import { resilienceMiddleware } from '../src/index.js';
import { chaosServer, echoClient, rejection, sleep } from './helpers.js';

// resilienceMiddleware runs its circuit breaker, rate limit and bulkhead as one
// unary step; these check that together they behave as the three middlewares in a row.
describe('resilienceMiddleware: circuit breaker, rate limit and bulkhead as one step', () => {
  it('an open circuit refuses before a token or a slot is spent; failures give back slot and permit', async () => {
    const server = await chaosServer({ faults: [{ status: Status.UNAVAILABLE }] });
    const breaker = createCircuitBreaker({ failureThreshold: 3, openDurationMs: 60_000 });
    const bucket = createTokenBucket({ capacity: 100, refillPerSecond: 0.001 });
    const pool = createPool({ concurrency: 1 });
    const client = echoClient(
      server.address,
      resilienceMiddleware({
        circuitBreaker: { breakerFor: () => breaker },
        rateLimit: { bucket },
        bulkhead: { pool },
      }),
    );
    for (let i = 0; i < 3; i++) {
      expect((await rejection(client.Unary({}))).code).toBe(Status.UNAVAILABLE);
      // The failed call gave its one slot back: the next one is not refused for want of it.
      expect(pool.active).toBe(0);
    }
    expect(breaker.state).toBe('open');
    expect(bucket.available()).toBe(97);
    const refused = await rejection(client.Unary({}));
    expect(refused.code).toBe(Status.UNAVAILABLE);
    expect(isCircuitOpenError(refused.cause)).toBe(true);
    expect(bucket.available()).toBe(97);
    expect(pool.active).toBe(0);
    expect(server.total()).toBe(3);
  });

  it('a rate-limit or bulkhead refusal is neutral for the circuit; the server never sees it', async () => {
    const server = await chaosServer({ faults: [{ latency: { kind: 'fixed', ms: 150 } }] });
    const breaker = createCircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
    const bucket = createTokenBucket({ capacity: 2, refillPerSecond: 0.001 });
    const client = echoClient(
      server.address,
      resilienceMiddleware({
        circuitBreaker: { breakerFor: () => breaker },
        rateLimit: { bucket },
        bulkhead: { concurrency: 1 },
      }),
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
    const pool = createPool({ concurrency: 1, maxQueue: 5 });
    const breaker = createCircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
    const client = echoClient(
      server.address,
      resilienceMiddleware({ circuitBreaker: { breakerFor: () => breaker }, bulkhead: { pool } }),
    );
    const first = client.Unary({});
    const waiting = client.Unary({});
    const controller = new AbortController();
    const aborted = rejection(client.Unary({}, { signal: controller.signal }));
    await sleep(20);
    expect(pool.queued).toBe(2);
    const started = performance.now();
    controller.abort();
    expect((await aborted).name).toBe('AbortError');
    expect(performance.now() - started).toBeLessThan(100);
    await first;
    await waiting;
    expect(server.total()).toBe(2);
    expect(pool.active + pool.queued).toBe(0);
    // Caller cancellation did not count against the circuit.
    expect(breaker.state).toBe('closed');
  });
});
