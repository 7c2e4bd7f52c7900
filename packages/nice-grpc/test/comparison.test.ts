import { createRetryBudget } from '@breakwater/core';
import { Status } from 'nice-grpc';
import { retryMiddleware as theirRetryMiddleware } from 'nice-grpc-client-middleware-retry';
import { describe, expect, it } from 'vitest';
import { retryMiddleware } from '../src/index.js';
import { chaosServer, echoClient } from './helpers.js';

const CALLS = 200;
const CONCURRENCY = 20;

/** Sends CALLS unary calls, CONCURRENCY at a time, all expected to fail. */
async function outage(call: () => Promise<unknown>): Promise<void> {
  let sent = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < CALLS) {
        sent++;
        await call().then(
          () => {
            throw new Error('the outage server answered');
          },
          () => {},
        );
      }
    }),
  );
}

describe('attempts per call under a sustained outage (100% UNAVAILABLE)', () => {
  it('ours stays near 1.2x with a retry budget; nice-grpc-client-middleware-retry sends retryMaxAttempts + 1', async () => {
    const ours = await chaosServer({ faults: [{ status: Status.UNAVAILABLE }] });
    const theirs = await chaosServer({ faults: [{ status: Status.UNAVAILABLE }] });
    const budget = createRetryBudget({ ratio: 0.2, minRetriesPerSecond: 1 });
    const ourClient = echoClient(
      ours.address,
      retryMiddleware({ attempts: 3, budget, backoff: { baseDelayMs: 1, jitter: 'none' } }),
    );
    // Theirs counts retries: retryMaxAttempts 2 is 3 attempts, like our attempts 3.
    const theirClient = echoClient(theirs.address, theirRetryMiddleware);
    await outage(() => ourClient.Unary({}));
    await outage(() => theirClient.Unary({}, { retryMaxAttempts: 2, retryBaseDelayMs: 1 }));
    const ourRatio = ours.total() / CALLS;
    const theirRatio = theirs.total() / CALLS;
    console.log(
      `attempts per call over ${CALLS} calls: breakwater ${ourRatio.toFixed(2)}x, nice-grpc-client-middleware-retry ${theirRatio.toFixed(2)}x`,
    );
    // Each request deposits 0.2 retries, plus a floor of 10 (1/s over 10 s): 250 attempts at most.
    expect(ourRatio).toBeLessThanOrEqual((CALLS * 1.2 + 10) / CALLS);
    expect(ourRatio).toBeGreaterThan(1);
    expect(theirRatio).toBe(3);
  });
});
