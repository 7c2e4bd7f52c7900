// protect() success path vs bare await, cockatiel wrap(retry, circuitBreaker, timeout) and opossum fire.
// Run: cd bench && node --import tsx micro/protect.ts
// Imports the sources (through tsx) so the numbers never come from a stale build.

import {
  ConsecutiveBreaker,
  circuitBreaker,
  handleAll,
  retry,
  TimeoutStrategy,
  timeout,
  wrap,
} from 'cockatiel';
import { bench, do_not_optimize, run, summary } from 'mitata';
import CircuitBreaker from 'opossum';
import { protect } from '../../packages/core/src/protect/index.js';

const op = async () => 1;
const opWithSignal = async ({ signal }: { signal: AbortSignal }) => (signal.aborted ? 0 : 1);

const runner = protect({
  attempts: 3,
  timeout: 1000,
  circuit: { threshold: 5, cooldown: 30000 },
  concurrency: 100,
});
const cockatiel = wrap(
  retry(handleAll, { maxAttempts: 2 }),
  circuitBreaker(handleAll, { halfOpenAfter: 30000, breaker: new ConsecutiveBreaker(5) }),
  timeout(1000, TimeoutStrategy.Aggressive),
);
const opossum = new CircuitBreaker(op, { timeout: 1000 });

summary(() => {
  bench('bare await', async () => do_not_optimize(await op()));
  bench('protect (attempts 3, timeout, circuit, concurrency 100)', async () =>
    do_not_optimize(await runner(op)),
  );
  bench('protect, fn reads signal', async () => do_not_optimize(await runner(opWithSignal)));
  bench('opossum fire (timeout 1000)', async () => do_not_optimize(await opossum.fire()));
  bench('cockatiel wrap(retry, circuitBreaker, timeout)', async () =>
    do_not_optimize(await cockatiel.execute(op)),
  );
});

await run();
opossum.shutdown();
