// Load-shaping primitives: token bucket and keyed limiter tryAcquire, pool.run vs bare await,
// and a memory run of 1,000,000 distinct keys through a keyed limiter bounded at 10,000.
// Run: cd bench && node --expose-gc --import tsx micro/limiters.ts [--memory-only]
// Imports the sources (through tsx) so the numbers never come from a stale build.
import { bench, do_not_optimize, run, summary } from 'mitata';
import { createKeyedLimiter, createTokenBucket } from '../../packages/core/src/limit/index.js';
import { createPool } from '../../packages/core/src/pool/index.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

// A bucket too large to ever refuse, so the loop measures the success path only.
const roomy = createTokenBucket({ capacity: 1e15, refillPerSecond: 1e15 });
// A bucket that always refuses: the rejected path allocates a RateLimitError.
const empty = createTokenBucket({ capacity: 1, refillPerSecond: 1e-9 });
empty.tryAcquire();
const keyed = createKeyedLimiter({ capacity: 1e15, refillPerSecond: 1e15 });
const warmKeys = Array.from({ length: 1000 }, (_, i) => `user-${i}`);
for (const k of warmKeys) keyed.tryAcquire(k);
let cursor = 0;
const churn = createKeyedLimiter({ capacity: 10, refillPerSecond: 1, maxKeys: 1000 });
let fresh = 0;

const pool = createPool({ concurrency: 100 });
const op = async () => 1;

summary(() => {
  bench('tokenBucket.tryAcquire() ok', () => do_not_optimize(roomy.tryAcquire()));
  bench('tokenBucket.tryAcquire() refused', () => do_not_optimize(empty.tryAcquire()));
  bench('keyedLimiter.tryAcquire(hot key)', () => do_not_optimize(keyed.tryAcquire('user-1')));
  bench('keyedLimiter.tryAcquire(1000 keys round robin)', () => {
    cursor = (cursor + 1) % 1000;
    return do_not_optimize(keyed.tryAcquire(warmKeys[cursor] as string));
  });
  bench('keyedLimiter.tryAcquire(new key, evicting)', () =>
    do_not_optimize(churn.tryAcquire(`k${fresh++}`)),
  );
});

summary(() => {
  bench('bare await', async () => do_not_optimize(await op()));
  bench('pool.run(op) (concurrency 100, free slot)', async () =>
    do_not_optimize(await pool.run(op)),
  );
});

if (!process.argv.includes('--memory-only')) await run();

// Memory: a keyed limiter bounded at 10,000 keys must not grow with the number of keys seen.
function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc?.();
  return process.memoryUsage().heapUsed;
}
const MB = (b: number) => `${(b / 1024 / 1024).toFixed(2)} MB`;

const baseline = heapAfterGc();
const limiter = createKeyedLimiter({ capacity: 5, refillPerSecond: 1, maxKeys: 10_000 });
for (let i = 0; i < 10_000; i++) limiter.tryAcquire(`key-${i}`);
const atCapacity = heapAfterGc();
const started = performance.now();
let maxSize = 0;
for (let i = 10_000; i < 1_000_000; i++) {
  limiter.tryAcquire(`key-${i}`);
  if ((i & 0xffff) === 0) maxSize = Math.max(maxSize, limiter.stats().size);
}
const elapsedMs = performance.now() - started;
const after = heapAfterGc();
const stats = limiter.stats();
maxSize = Math.max(maxSize, stats.size);

console.log('\nkeyed limiter memory run: 1,000,000 distinct keys, maxKeys 10,000');
console.log(`  size ${stats.size} (max seen ${maxSize}), evictions ${stats.evictions}`);
console.log(`  heap: baseline ${MB(baseline)}, 10k keys ${MB(atCapacity)}, after 1M ${MB(after)}`);
console.log(
  `  10k keys cost ${MB(atCapacity - baseline)}; 990k more keys added ${MB(after - atCapacity)}`,
);
console.log(
  `  990k new-key tryAcquire in ${elapsedMs.toFixed(0)} ms (${((elapsedMs * 1e6) / 990_000).toFixed(0)} ns each)`,
);
if (stats.size !== 10_000 || maxSize !== 10_000 || stats.evictions !== 990_000) {
  console.error('FAIL: the keyed limiter did not stay at 10,000 keys');
  process.exitCode = 1;
}
// Bounded: the registry after 1M keys may differ from the one at 10k by GC noise, not by keys.
if (after - atCapacity > 2 * 1024 * 1024) {
  console.error('FAIL: heap grew by more than 2 MB after the key registry was full');
  process.exitCode = 1;
}
