// Success-path cost of withRetry and withTimeout against a bare await.
// Run: cd bench && node --import tsx micro/retry-timeout.ts
import { withRetry, withTimeout } from '@breakwater/core';
import { bench, do_not_optimize, run, summary } from 'mitata';

const value = { ok: true };
// Two op shapes: one that never looks at a signal (arity 0) and one that takes it.
const op = async () => value;
const opWithSignal = async (signal: AbortSignal) => (signal.aborted ? undefined : value);
const timeout = { timeoutMs: 1000 };

summary(() => {
  bench('bare await op()', async () => {
    do_not_optimize(await op());
  });
  bench('withRetry(op)', async () => {
    do_not_optimize(await withRetry(op));
  });
  bench('withRetry((signal) => op)', async () => {
    do_not_optimize(await withRetry(opWithSignal));
  });
  bench('withTimeout(op, 1000 ms)', async () => {
    do_not_optimize(await withTimeout(op, timeout));
  });
  bench('withTimeout((signal) => op, 1000 ms)', async () => {
    do_not_optimize(await withTimeout(opWithSignal, timeout));
  });
});

await run();
