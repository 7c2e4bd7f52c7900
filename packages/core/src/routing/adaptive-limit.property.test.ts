import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isConcurrencyLimitError } from '../errors/concurrency-limit-error.js';
import type { Criticality } from '../limit/criticality.js';
import { createManualClock } from '../time/manual-clock.js';
import { createRouter } from './router.js';

const TIERS: readonly Criticality[] = ['sheddable', 'default', 'critical'];

/** What a generated run does, one step at a time, on the manual clock. */
type Step =
  /** A request of `criticality` whose operation takes `ms` and then answers or throws. */
  | { kind: 'start'; criticality: Criticality; ms: number; fails: boolean }
  /** The caller of the `nth` request started so far (modulo) aborts it. */
  | { kind: 'abort'; nth: number }
  | { kind: 'advance'; ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('start' as const),
      criticality: fc.constantFrom(...TIERS),
      ms: fc.integer({ min: 1, max: 60 }),
      // One in four fails: the request fails over to the next provider that has room.
      fails: fc.integer({ min: 0, max: 3 }).map((x) => x === 0),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('abort' as const), nth: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.integer({ min: 1, max: 40 }),
    }),
  },
);

describe('router concurrency.adaptive invariants (fast-check, manual clock)', () => {
  it('in flight per provider never exceeds its limit; a refused, aborted or ended request holds no slot; a request is refused exactly when no limit has room for its criticality, lowest tier first', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 3 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(step, { minLength: 10, maxLength: 80 }),
        async (n, initialLimit, steps) => {
          const clock = createManualClock();
          const ids = Array.from({ length: n }, (_, i) => `p${i}`);
          const router = createRouter({
            providers: ids.map((id) => ({ id, resource: id })),
            selection: 'round-robin',
            // Failures fail over without opening circuits: only the limits decide admission.
            protection: { circuit: false },
            // A short probe interval: the limit also drops to minLimit while it re-measures.
            concurrency: {
              adaptive: { initialLimit, minLimit: 1, maxLimit: 6, probeIntervalMs: 200 },
            },
            clock,
            sleep: clock.sleep,
          });
          const limiter = (id: string) => router.limiter(id) ?? expect.fail(`no limiter for ${id}`);
          // What the providers saw: operations running on each now.
          const running = new Map(ids.map((id) => [id, 0]));
          const callers: AbortController[] = [];
          const settled: Array<Promise<unknown>> = [];

          const checkSlots = () => {
            for (const id of ids) {
              // Every running operation holds one slot, and nothing else does.
              expect(limiter(id).inFlight).toBe(running.get(id));
              // Tiers: room for a lower tier means room for every higher one.
              const room = TIERS.map((c) => limiter(id).hasRoom(c));
              expect(room).toEqual([...room].sort((a, b) => Number(a) - Number(b)));
            }
          };

          for (const s of steps) {
            if (s.kind === 'advance') clock.advance(s.ms);
            else if (s.kind === 'abort') callers[s.nth % Math.max(1, callers.length)]?.abort();
            else {
              // Quiescent: nothing runs but this request, so its admission sees this state.
              const anyRoom = ids.some((id) => limiter(id).hasRoom(s.criticality));
              const caller = new AbortController();
              callers.push(caller);
              const request = router.execute(
                async (id, { signal }) => {
                  const now = (running.get(id) ?? 0) + 1;
                  expect(now).toBeLessThanOrEqual(limiter(id).limit);
                  running.set(id, now);
                  try {
                    await clock.sleep(s.ms, signal);
                  } finally {
                    running.set(id, (running.get(id) ?? 0) - 1);
                  }
                  if (s.fails) throw new Error(`${id} failed`);
                  return id;
                },
                { criticality: s.criticality, signal: caller.signal },
              );
              const outcome = request.then(
                () => 'answered',
                (error: unknown) => (isConcurrencyLimitError(error) ? 'refused' : 'failed'),
              );
              settled.push(outcome);
              await clock.flush();
              // Refused at once, unsent, exactly when no provider's limit had room for it.
              const refusedAtOnce = await Promise.race([outcome, Promise.resolve('pending')]);
              expect(refusedAtOnce === 'refused').toBe(!anyRoom);
            }
            await clock.flush();
            checkSlots();
          }
          for (const c of callers) c.abort();
          await clock.flush();
          clock.advance(1_000);
          await Promise.all(settled);
          checkSlots();
          for (const id of ids) expect(limiter(id).inFlight).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  });
});
