import {
  type CircuitBreaker,
  createCircuitBreaker,
  createManualClock,
  createPool,
  createTokenBucket,
} from '@breakwater/core';
import fc from 'fast-check';
import { ClientError, type ClientMiddlewareCall, Status } from 'nice-grpc-common';
import { describe, expect, it } from 'vitest';
import { bulkheadStage } from '../src/bulkhead-middleware.js';
import { circuitBreakerStage } from '../src/circuit-breaker-middleware.js';
import { abortErrorFor } from '../src/internals/errors.js';
import { guardStage } from '../src/internals/guard-stage.js';
import { UnaryChain, type UnaryStage } from '../src/internals/unary-stage.js';
import { rateLimitStage } from '../src/rate-limit-middleware.js';

/** What the channel does with one call: answer after `delay` ms, unless the caller aborts at `abortAt`. */
interface Script {
  startAt: number;
  delay: number;
  code: Status;
  abortAt: number | undefined;
}

const scriptArb: fc.Arbitrary<Script> = fc.record({
  startAt: fc.integer({ min: 0, max: 40 }),
  delay: fc.integer({ min: 0, max: 30 }),
  code: fc.constantFrom(Status.OK, Status.OK, Status.UNAVAILABLE, Status.INVALID_ARGUMENT),
  abortAt: fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined }),
});

const PATH = '/breakwater.chaos.v1.Echo/Unary';

// The guard is resilienceMiddleware's circuit breaker, rate limit and bulkhead in one
// async step; the channel below it is scripted on a manual clock, so any mix of
// successes, failures, refusals, queueing and caller aborts can be replayed.
describe('guardStage (property)', () => {
  it('every call settles once; every circuit permit is released once and every slot given back', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(scriptArb, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 3, max: 14 }),
        async (scripts, concurrency, maxQueue, tokens) => {
          const clock = createManualClock(0);
          const breaker = createCircuitBreaker({
            failureThreshold: 2,
            openDurationMs: 10,
            halfOpenMaxCalls: 1,
            clock,
          });
          // Counts permits: each one taken must come back exactly once.
          const taken = new Set<number>();
          let released = 0;
          const counted: CircuitBreaker = Object.create(breaker);
          counted.tryAcquire = () => {
            const permit = breaker.tryAcquire();
            if (permit >= 0) {
              expect(taken.has(permit)).toBe(false);
              taken.add(permit);
            }
            return permit;
          };
          counted.release = (permit, outcome, durationMs) => {
            expect(taken.delete(permit)).toBe(true);
            released++;
            breaker.release(permit, outcome, durationMs);
          };
          const pool = createPool({ concurrency, maxQueue });
          const bucket = createTokenBucket({ capacity: tokens, refillPerSecond: 0.001, clock });
          let reached = 0;
          const channel: UnaryStage = {
            unary: (_call, options) => {
              reached++;
              const script = (options as { script: Script }).script;
              return clock.sleep(script.delay, options.signal).then(() => {
                if (options.signal?.aborted) throw abortErrorFor(options.signal);
                if (script.code !== Status.OK) throw new ClientError(PATH, script.code, 'scripted');
                return 'response' as never;
              });
            },
          };
          const chain = new UnaryChain([
            guardStage(
              circuitBreakerStage({ breakerFor: () => counted, clock }),
              rateLimitStage({ bucket }),
              bulkheadStage({ pool }),
            ),
            channel,
          ]);
          const call = { method: { path: PATH } } as ClientMiddlewareCall<unknown, unknown>;
          const settled: Array<'ok' | 'failed'> = [];
          const calls = scripts.map(async (script) => {
            await clock.sleep(script.startAt);
            const controller = new AbortController();
            if (script.abortAt !== undefined) {
              void clock
                .sleep(Math.max(0, script.abortAt - script.startAt))
                .then(() => controller.abort());
            }
            try {
              await chain.next(call, { signal: controller.signal, script } as never, 0);
              settled.push('ok');
            } catch {
              settled.push('failed');
            }
          });
          for (let i = 0; i < 20 && settled.length < scripts.length; i++) {
            await clock.advanceAsync(10);
          }
          await Promise.all(calls);
          expect(settled).toHaveLength(scripts.length);
          expect(taken.size).toBe(0);
          expect(released).toBeLessThanOrEqual(scripts.length);
          expect(pool.active + pool.queued).toBe(0);
          expect(reached).toBeLessThanOrEqual(scripts.length);
          // Nothing scheduled on the clock outlives the calls but the abort timers.
          await clock.advanceAsync(100);
          expect(clock.pending).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  });
});
