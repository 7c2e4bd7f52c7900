import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../time/manual-clock.js';
import { protect } from './protect.js';

const attemptArb = fc.record({
  ms: fc.integer({ min: 0, max: 80 }),
  fails: fc.boolean(),
  syncThrow: fc.boolean(),
});

const callArb = fc.record({
  startAt: fc.integer({ min: 0, max: 100 }),
  abortAt: fc.option(fc.integer({ min: 0, max: 200 }), { nil: undefined }),
  attempts: fc.array(attemptArb, { minLength: 3, maxLength: 3 }),
  fallback: fc.boolean(),
});

const runnerArb = fc.record({
  attempts: fc.integer({ min: 1, max: 3 }),
  timeoutMode: fc.constantFrom('immediate' as const, 'wait' as const),
  concurrency: fc.integer({ min: 1, max: 3 }),
  maxQueue: fc.integer({ min: 0, max: 3 }),
  circuit: fc.boolean(),
  backoff: fc.boolean(),
});

describe('protect: properties', () => {
  it('under random success/failure/timeout/abort: each call settles once, bounds hold, no timer remains', async () => {
    await fc.assert(
      fc.asyncProperty(
        runnerArb,
        fc.array(callArb, { minLength: 1, maxLength: 12 }),
        async (r, calls) => {
          const clock = createManualClock();
          const run = protect({
            retry: {
              attempts: r.attempts,
              backoff: r.backoff
                ? { baseDelayMs: 10, strategy: 'exponential', jitter: 'none' }
                : { baseDelayMs: 0 },
            },
            attemptTimeoutMs: 50,
            timeoutMode: r.timeoutMode,
            concurrency: { limit: r.concurrency, maxQueue: r.maxQueue },
            circuit: r.circuit ? { failureThreshold: 2, openDurationMs: 100 } : false,
            clock,
            sleep: clock.sleep,
          });
          const settledCount = calls.map(() => 0);
          const wrongValue: [number, number][] = [];
          let maxActive = 0;
          let maxQueued = 0;
          const sample = () => {
            maxActive = Math.max(maxActive, run.active);
            maxQueued = Math.max(maxQueued, run.queued);
          };
          const finished = calls.map(async (c, i) => {
            await clock.sleep(c.startAt);
            const ac = new AbortController();
            const done = new AbortController();
            if (c.abortAt !== undefined) {
              void clock.sleep(c.abortAt, done.signal).then(() => {
                if (!done.signal.aborted) ac.abort(new Error(`abort ${i}`));
              });
            }
            const p = run(
              async ({ signal, attempt }) => {
                sample();
                const a = c.attempts[attempt - 1] ?? { ms: 0, fails: false, syncThrow: false };
                if (a.syncThrow && a.fails) throw new Error('sync');
                await clock.sleep(a.ms, signal);
                sample();
                if (signal.aborted) throw signal.reason;
                if (a.fails) throw new Error('async');
                return i;
              },
              {
                signal: ac.signal,
                ...(c.fallback ? { fallback: () => -1 } : {}),
              },
            );
            sample();
            const count = () => {
              settledCount[i] = (settledCount[i] ?? 0) + 1;
            };
            // A call resolves with its own operation's value or its own fallback's, never another call's.
            p.then((value) => {
              count();
              if (value !== i && value !== -1) wrongValue.push([i, value]);
            }, count);
            await p.catch(() => {});
            sample();
            done.abort();
          });
          await clock.run(Promise.all(finished));
          await clock.flush();
          expect(settledCount).toEqual(calls.map(() => 1));
          expect(wrongValue).toEqual([]);
          expect(maxActive).toBeLessThanOrEqual(r.concurrency);
          expect(maxQueued).toBeLessThanOrEqual(r.maxQueue);
          expect(run.active).toBe(0);
          expect(run.queued).toBe(0);
          expect(clock.pending).toBe(0);
        },
      ),
      { seed: 42, numRuns: 150 },
    );
  });
});
