// Circuit breaker success path: `await breaker.execute(fn)` and tryAcquire/release
// against a bare `await fn()`. Target: execute within 2x of the bare await.
// Run: cd bench && node --import tsx micro/breaker.ts
// Imports the sources (through tsx) so the numbers never come from a stale build.
import { ConsecutiveBreaker, circuitBreaker, handleAll } from 'cockatiel';
import { bench, do_not_optimize, run, summary } from 'mitata';
import { createCircuitBreaker } from '../../packages/core/src/breaker/index.js';
import { median } from '../harness/stats.js';

const fn = async () => 1;

const plain = createCircuitBreaker({});
// The rate window and slow-call rule add two clock reads and a ring-buffer write per call.
const windowed = createCircuitBreaker({
  window: { type: 'count', size: 100, minimumCalls: 20, failureRateThreshold: 0.5 },
  slowCall: { durationMs: 1000, rateThreshold: 0.8 },
});
const cockatiel = circuitBreaker(handleAll, {
  halfOpenAfter: 10_000,
  breaker: new ConsecutiveBreaker(5),
});

const BARE = 'bare await fn()';
const EXECUTE = 'await breaker.execute(fn)';

summary(() => {
  bench(BARE, async () => do_not_optimize(await fn()));
  bench(EXECUTE, async () => do_not_optimize(await plain.execute(fn)));
  bench('await breaker.execute(fn) (count window + slow-call rule)', async () =>
    do_not_optimize(await windowed.execute(fn)),
  );
  bench('cockatiel: await policy.execute(fn)', async () =>
    do_not_optimize(await cockatiel.execute(fn)),
  );
});

summary(() => {
  bench('tryAcquire() + release(permit, "success")', () => {
    const permit = plain.tryAcquire();
    plain.release(permit, 'success');
    return do_not_optimize(permit);
  });
});

await run();

// The machine is shared with other jobs, so mitata's averages swing. Alternate the two
// loops over many rounds and keep each one's fastest and median round: noise only adds time.
async function nsPerCall(body: () => Promise<unknown>, calls: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < calls; i++) await body();
  return ((performance.now() - started) * 1e6) / calls;
}
const bareBody = () => fn();
const executeBody = () => plain.execute(fn);
const rounds = { bare: [] as number[], execute: [] as number[] };
for (let round = 0; round < 25; round++) {
  rounds.bare.push(await nsPerCall(bareBody, 200_000));
  rounds.execute.push(await nsPerCall(executeBody, 200_000));
}
const best = (xs: number[]) => Math.min(...xs);
for (const [label, pick] of [
  ['fastest round', best],
  ['median round', median],
] as const) {
  const bare = pick(rounds.bare);
  const execute = pick(rounds.execute);
  console.log(
    `${label}: bare await ${bare.toFixed(1)} ns/call, breaker.execute ${execute.toFixed(1)} ns/call, ` +
      `ratio ${(execute / bare).toFixed(2)}x (target <= 2x)`,
  );
}
