import { describe, expect, it } from 'vitest';
import { createCircuitBreaker } from '../breaker/circuit-breaker.js';
import { createTokenBucket } from '../limit/token-bucket.js';
import { createRetryBudget } from '../retry/budget.js';
import { COUNT_ONLY_CIRCUIT } from '../test-helpers/circuit.js';
import { createManualClock } from '../time/manual-clock.js';
import { DEFAULT_BACKOFF, MAX_ATTEMPTS } from './engine.js';
import { resolveResilience, STANDARD_RESILIENCE } from './resilience-options.js';

describe('resolveResilience — the one vocabulary', () => {
  it('turns every part off when nothing is given and the standard stack is not asked for', () => {
    const plan = resolveResilience('test', '', undefined, false);
    expect(plan.timeoutMs).toBe(Number.POSITIVE_INFINITY);
    expect(plan.attemptTimeoutMs).toBe(Number.POSITIVE_INFINITY);
    expect(plan.retry).toBeUndefined();
    expect(plan.hedge).toBeUndefined();
    expect(plan.budget).toBeUndefined();
    expect(plan.circuit).toBeUndefined();
    expect(plan.concurrency).toBeUndefined();
    expect(plan.rateLimit).toBeUndefined();
  });

  it('gives the standard stack part by part, each switchable off with false', () => {
    const plan = resolveResilience('test', '', {}, true);
    expect(plan.timeoutMs).toBe(STANDARD_RESILIENCE.timeoutMs);
    expect(plan.attemptTimeoutMs).toBe(STANDARD_RESILIENCE.attemptTimeoutMs);
    expect(plan.retry?.attempts).toBe(3);
    expect(plan.retry?.backoff).toBe(DEFAULT_BACKOFF);
    expect(plan.retry?.budget).toBe(plan.budget);
    expect(plan.budget).toBeDefined();
    expect(plan.circuit?.state).toBe('closed');
    expect(plan.concurrency).toEqual({ limit: 1000, maxQueue: 0 });

    const off = resolveResilience(
      'test',
      '',
      {
        timeoutMs: false,
        attemptTimeoutMs: false,
        retry: false,
        budget: false,
        circuit: false,
        concurrency: false,
      },
      true,
    );
    expect(off.timeoutMs).toBe(Number.POSITIVE_INFINITY);
    expect(off.retry).toBeUndefined();
    expect(off.budget).toBeUndefined();
    expect(off.circuit).toBeUndefined();
    expect(off.concurrency).toBeUndefined();
  });

  it('takes ready instances as they are and builds the rest from options', () => {
    const clock = createManualClock();
    const budget = createRetryBudget({ clock });
    const circuit = createCircuitBreaker({ ...COUNT_ONLY_CIRCUIT, clock });
    const bucket = createTokenBucket({ capacity: 1, refillPerSecond: 1, clock });
    const shared = resolveResilience(
      'test',
      '',
      { budget, circuit, rateLimit: bucket, retry: {} },
      false,
    );
    expect(shared.budget).toBe(budget);
    expect(shared.circuit).toBe(circuit);
    expect(shared.rateLimit).toBe(bucket);
    expect(shared.retry?.budget).toBe(budget);

    const built = resolveResilience(
      'test',
      '',
      {
        clock,
        circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 2, openDurationMs: 1000 },
        rateLimit: { capacity: 1, refillPerSecond: 1 },
        hedge: { delayMs: 50 },
      },
      false,
    );
    // The breaker runs on the stack's clock.
    built.circuit?.onFailure();
    built.circuit?.onFailure();
    expect(built.circuit?.state).toBe('open');
    clock.advance(1000);
    expect(built.circuit?.state).toBe('half-open');
    expect(built.rateLimit?.tryAcquire().ok).toBe(true);
    expect(built.rateLimit?.tryAcquire().ok).toBe(false);
    expect(built.hedge?.hedgeDelayMs).toBe(50);
    expect(built.hedge?.attempts).toBe(2);
  });

  it('names the full option path in every error', () => {
    const cases: Array<[unknown, RegExp]> = [
      [
        { retry: { attempts: MAX_ATTEMPTS + 1 } },
        /^createRouter: providers\[1\]\.protection\.retry\.attempts must be <= 10/,
      ],
      [{ retry: { attempts: 0 } }, /retry\.attempts must be >= 1/],
      [{ retry: { backoff: { baseDelayMs: -1 } } }, /retry\.backoff\.baseDelayMs must be >= 0/],
      [{ hedge: { delayMs: 'soon' } }, /hedge\.delayMs must be a number/],
      [{ hedge: { delayMs: 10, attempts: 1 } }, /hedge\.attempts must be >= 2/],
      [
        { circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 0 } },
        /circuit\.failureThreshold must be > 0/,
      ],
      [{ concurrency: { limit: 1.5 } }, /concurrency\.limit must be an integer/],
      [{ rateLimit: { capacity: 0, refillPerSecond: 1 } }, /rateLimit\.capacity/],
      [{ timeoutMs: Number.NaN }, /timeoutMs must be a number/],
      [{ attemptTimeoutMs: 0 }, /attemptTimeoutMs must be > 0/],
      [{ budget: { ratio: -1 } }, /budget\.ratio must be >= 0/],
      [{ retry: { onRetry: 'log' } }, /retry\.onRetry must be a function/],
      [
        { retry: { atempts: 2 } },
        /unknown option `providers\[1\]\.protection\.retry\.atempts` — did you mean `providers\[1\]\.protection\.retry\.attempts`/,
      ],
      [{ timout: 5 }, /unknown option `providers\[1\]\.protection\.timout`/],
      [
        { circuit: { threshold: 5 } },
        /unknown option `providers\[1\]\.protection\.circuit\.threshold`/,
      ],
    ];
    for (const [options, message] of cases) {
      expect(() =>
        resolveResilience('createRouter', 'providers[1].protection', options as never, false),
      ).toThrow(message);
    }
  });
});
