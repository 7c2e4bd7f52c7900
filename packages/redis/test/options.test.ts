import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveResilience } from '../../core/src/attempts/resilience-options.js';
import {
  createRedisCircuitBreaker,
  createRedisKeyedLimiter,
  createRedisRetryBudget,
  createRedisTokenBucket,
} from '../src/index.js';

// A client that never connects: construction must not need Redis.
const client = new Redis({ port: 1, lazyConnect: true, enableOfflineQueue: false });
client.on('error', () => {});
afterAll(() => client.disconnect());

describe('options', () => {
  it('names the full option path and the bad value', () => {
    expect(() =>
      createRedisTokenBucket({ client, name: 'x', capacity: 0, refillPerSecond: 1 }),
    ).toThrow(
      new RangeError('createRedisTokenBucket: capacity must be a finite number > 0, got 0'),
    );
    expect(() =>
      createRedisTokenBucket({ client, name: 'x', capacity: 1, refillPerSecond: 1, localShare: 2 }),
    ).toThrow(/localShare must be a finite number > 0 and <= 1, got 2/);
    expect(() =>
      createRedisKeyedLimiter({ client, name: 'x', capacity: 1, refillPerSecond: 1, maxKeys: 1.5 }),
    ).toThrow(/createRedisKeyedLimiter: maxKeys must be an integer >= 1, got 1.5/);
    expect(() => createRedisRetryBudget({ client, name: '', ratio: 0.1 })).toThrow(TypeError);
    expect(() =>
      createRedisRetryBudget({ client, name: 'x', fallback: 'maybe' as 'open' }),
    ).toThrow(/fallback must be 'local', 'open' or 'closed', got "maybe"/);
    expect(() => createRedisRetryBudget({ client: {} as Redis, name: 'x' })).toThrow(
      /client must be an ioredis client/,
    );
    expect(() =>
      createRedisCircuitBreaker({ client, name: 'x', timeoutMs: -1, subscriber: client }),
    ).toThrow(/timeoutMs must be a finite number > 0, got -1/);
    expect(() =>
      createRedisTokenBucket({
        client,
        name: 'x',
        capacity: 1,
        refillPerSecond: 1,
        lease: 3,
      } as never),
    ).toThrow(/unknown option `lease`/);
  });

  it("the circuit refuses the limiters' fallback options, saying why", () => {
    for (const option of [{ localShare: 0.25 }, { fallback: 'local' }]) {
      expect(() =>
        createRedisCircuitBreaker({ client, name: 'c', subscriber: client, ...option } as never),
      ).toThrow(
        /^createRedisCircuitBreaker: `(localShare|fallback)` is an option of the limiters and the budget, not of the circuit: while Redis is away its own breaker decides alone$/,
      );
    }
  });

  it('plugs into the shared vocabulary as rateLimit, budget and circuit instances', () => {
    const rateLimit = createRedisTokenBucket({
      client,
      name: 'v',
      capacity: 5,
      refillPerSecond: 5,
    });
    const budget = createRedisRetryBudget({ client, name: 'v' });
    const circuit = createRedisCircuitBreaker({ client, name: 'v', subscriber: client });
    const plan = resolveResilience('test', '', { rateLimit, budget, circuit }, false);
    expect(plan.rateLimit).toBe(rateLimit);
    expect(plan.budget).toBe(budget);
    expect(plan.circuit).toBe(circuit);
    // Redis unreachable: decisions are local at once (fail-open by share), never a promise.
    expect(rateLimit.tryAcquire().ok).toBe(true);
    expect(budget.tryRetry()).toBe(true);
    expect(circuit.tryAcquire()).toBeGreaterThanOrEqual(0);
  });
});
