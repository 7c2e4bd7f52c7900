import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRoutingError, type RoutingError } from '../errors/routing-error.js';
import { createManualClock } from '../time/manual-clock.js';
import { createRouter } from './router.js';
import type { RouteSelectionType } from './types.js';

const SELECTIONS: RouteSelectionType[] = [
  'priority',
  'sticky',
  'round-robin',
  'least-latency',
  'power-of-two',
  'least-loaded',
  'race',
];

describe('routing invariants (fast-check)', () => {
  it('visits each provider at most once per request; a RoutingError lists every provider exactly once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...SELECTIONS),
        fc.integer({ min: 2, max: 5 }).chain((n) =>
          fc.array(fc.array(fc.boolean(), { minLength: n, maxLength: n }), {
            minLength: 1,
            maxLength: 8,
          }),
        ),
        fc.integer({ min: 1, max: 3 }),
        async (selection, outcomes, attempts) => {
          const n = outcomes[0]!.length;
          const clock = createManualClock();
          const ids = Array.from({ length: n }, (_, i) => `p${i}`);
          let request = 0;
          const router = createRouter({
            providers: ids.map((id, i) => ({ id, resource: i })),
            selection,
            protection: {
              retry: { attempts, backoff: { baseDelayMs: 0 } },
              circuit: { failureThreshold: 2, openDurationMs: 50 },
            },
            clock,
            sleep: clock.sleep,
            random: () => 0.3,
          });
          for (const row of outcomes) {
            request++;
            const selected: string[] = [];
            const sub = router.onSelected((e) => selected.push(e.providerId));
            const perProvider = new Map<number, number>();
            const p = router.execute(async (i) => {
              perProvider.set(i, (perProvider.get(i) ?? 0) + 1);
              await clock.sleep(1 + i);
              if (!row[i]) throw new Error(`p${i} failed in ${request}`);
              return i;
            });
            const outcome = await clock.run(p).then(
              (value) => ({ ok: true as const, value }),
              (error: unknown) => ({ ok: false as const, error }),
            );
            sub.dispose();
            expect(new Set(selected).size).toBe(selected.length);
            for (const count of perProvider.values()) expect(count).toBeLessThanOrEqual(attempts);
            if (outcome.ok) {
              expect(row[outcome.value]).toBe(true);
            } else {
              expect(isRoutingError(outcome.error)).toBe(true);
              const visits = (outcome.error as RoutingError).visits;
              const visited = visits.map((v) => v.providerId);
              expect(new Set(visited).size).toBe(visited.length);
              expect(visits.length).toBe(n);
              const failed = visits.filter((v) => v.status === 'failed');
              expect((outcome.error as RoutingError).errors).toHaveLength(failed.length);
            }
            clock.advance(10);
          }
          expect(clock.pending).toBe(0);
        },
      ),
      { numRuns: 60 },
    );
  });
});
