// Router success path: `await router.execute(fn)` over 3 providers with priority
// selection, against a bare `await fn(resource)`. Target: < 1 µs overhead per call.
// Run: cd bench && node --import tsx micro/router.ts
// Imports the sources (through tsx) so the numbers never come from a stale build.
import { bench, do_not_optimize, run, summary } from 'mitata';
import { createRouter } from '../../packages/core/src/routing/index.js';
import { median } from '../harness/stats.js';

interface Client {
  get(): Promise<number>;
}
const client = (n: number): Client => ({ get: async () => n });
const providers = [
  { id: 'a', resource: client(1) },
  { id: 'b', resource: client(2) },
  { id: 'c', resource: client(3) },
];
const selection = { type: 'priority', priorities: { a: 3, b: 2, c: 1 } } as const;

// Default protection: one attempt, no timeout, no circuit.
const plain = createRouter({ providers, selection });
// With a circuit per provider (tryAcquire/release on every call).
const circuits = createRouter({
  providers,
  selection,
  protection: { attempts: 3, circuit: { threshold: 5, cooldown: 30_000 } },
});
// With a concurrency limit (one pool slot covers the traversal).
const limited = createRouter({ providers, selection, concurrency: 64 });

const resource = providers[0]!.resource;
const op = (c: Client) => c.get();
const signal = new AbortController().signal;

summary(() => {
  bench('bare await fn(resource)', async () => do_not_optimize(await op(resource)));
  bench('router.execute(fn) — 3 providers, priority', async () =>
    do_not_optimize(await plain.execute(op)),
  );
  bench('router.execute(fn) — + circuits, attempts 3', async () =>
    do_not_optimize(await circuits.execute(op)),
  );
  bench('router.execute(fn) — + concurrency 64', async () =>
    do_not_optimize(await limited.execute(op)),
  );
  bench('router.execute(fn, { signal })', async () =>
    do_not_optimize(await plain.execute(op, { signal })),
  );
});

await run();

// The machine is shared with other jobs, so mitata's averages swing. Alternate the loops
// over many rounds and keep each one's fastest and median round: noise only adds time.
async function nsPerCall(body: () => Promise<unknown>, calls: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < calls; i++) await body();
  return ((performance.now() - started) * 1e6) / calls;
}
const bodies = {
  bare: () => op(resource),
  router: () => plain.execute(op),
  circuits: () => circuits.execute(op),
};
const rounds: Record<keyof typeof bodies, number[]> = { bare: [], router: [], circuits: [] };
for (let round = 0; round < 20; round++) {
  for (const key of Object.keys(bodies) as (keyof typeof bodies)[]) {
    rounds[key].push(await nsPerCall(bodies[key], 200_000));
  }
}
const best = (xs: number[]) => Math.min(...xs);
for (const [label, pick] of [
  ['fastest round', best],
  ['median round', median],
] as const) {
  const bare = pick(rounds.bare);
  const router = pick(rounds.router);
  const withCircuits = pick(rounds.circuits);
  console.log(
    `${label}: bare ${bare.toFixed(1)} ns/call, router.execute ${router.toFixed(1)} ns/call ` +
      `(overhead ${(router - bare).toFixed(1)} ns, target < 1000), ` +
      `with circuits ${withCircuits.toFixed(1)} ns/call (overhead ${(withCircuits - bare).toFixed(1)} ns)`,
  );
}

// Context for the numbers above: the success path reads the clock three times (visit start
// and end in the router, once more in the health registry). On VMs without a fast clock
// source each read is a syscall, which dominates the overhead.
const reads = 1_000_000;
const clockStart = performance.now();
let sink = 0;
for (let i = 0; i < reads; i++) sink += Date.now();
do_not_optimize(sink);
console.log(`clock read: ${(((performance.now() - clockStart) * 1e6) / reads).toFixed(1)} ns each`);
