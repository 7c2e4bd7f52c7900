// Success-path cost of withRetry and withTimeout against a bare await.
// Run: cd bench && node --import tsx micro/retry-timeout.ts
// Targets: withRetry within 2x of a bare await; withTimeout under 1 µs per call.
import { withRetry, withTimeout } from '@breakwater/core';
import { bench, do_not_optimize, run, summary } from 'mitata';

const value = { ok: true };
// Two op shapes: one that never looks at a signal (arity 0) and one that takes it.
const op = async () => value;
const opWithSignal = async (signal: AbortSignal) => (signal.aborted ? undefined : value);
const timeout = { timeoutMs: 1000 };

const cases: [string, () => Promise<unknown>][] = [
  ['bare await op()', () => op()],
  ['withRetry(op)', () => withRetry(op)],
  ['withRetry((signal) => op)', () => withRetry(opWithSignal)],
  ['withTimeout(op, 1000 ms)', () => withTimeout(op, timeout)],
  ['withTimeout((signal) => op, 1000 ms)', () => withTimeout(opWithSignal, timeout)],
];

summary(() => {
  for (const [name, call] of cases) {
    bench(name, async () => {
      do_not_optimize(await call());
    });
  }
});
await run();

// Wall time is noisy on a shared machine; CPU time per call is the steadier figure.
async function cpuNsPerCall(call: () => Promise<unknown>, calls = 300_000): Promise<number> {
  for (let i = 0; i < calls; i++) await call(); // warm-up
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) await call();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / calls;
}

console.log('\nCPU time per call (process.cpuUsage), ratio to bare await:');
let bare = 0;
for (const [name, call] of cases) {
  const ns = await cpuNsPerCall(call);
  if (bare === 0) bare = ns;
  console.log(`  ${name.padEnd(38)} ${ns.toFixed(0).padStart(6)} ns  ${(ns / bare).toFixed(2)}x`);
}
