// tRPC query throughput over real HTTP (chaos server, no faults, same process):
// bare httpBatchLink vs the same link behind resilienceLink. Target: >= 97% of bare.
// Run: cd bench && node --import tsx micro/trpc-links.ts [seconds-per-round]
// Rounds alternate (A B C, B C A, C A B, ...) so drift on a busy machine hits both variants.
import { performance } from 'node:perf_hooks';
import { createTRPCClient, httpBatchLink, type TRPCLink } from '@trpc/client';
import { type ChaosTrpcRouter, createChaosTrpcServer } from '../../packages/chaos/src/index.js';
import { resilienceLink, retryLink } from '../../packages/trpc/src/index.js';
import { median } from '../harness/stats.js';

const roundMs = Number(process.argv[2] ?? 2) * 1000;
const rounds = 6;
const inFlight = 32;

const server = await createChaosTrpcServer({ name: 'bench' });
const terminal = () => httpBatchLink<ChaosTrpcRouter>({ url: server.url });
const variants: Record<string, () => TRPCLink<ChaosTrpcRouter>[]> = {
  'bare httpBatchLink': () => [terminal()],
  retryLink: () => [retryLink(), terminal()],
  'resilienceLink (retry + circuit + attemptTimeout)': () => [
    resilienceLink({
      retry: {},
      circuit: { circuit: { failureThreshold: 5 } },
      attemptTimeout: { timeoutMs: 5000 },
    }),
    terminal(),
  ],
};

// CPU time per query (client + in-process server) is reported too: on a shared,
// loaded machine it is far steadier than wall-clock throughput.
const cpuPerQuery: Record<string, number[]> = {};

async function round(links: TRPCLink<ChaosTrpcRouter>[], name?: string): Promise<number> {
  const client = createTRPCClient<ChaosTrpcRouter>({ links });
  let done = 0;
  const end = performance.now() + roundMs;
  const worker = async () => {
    while (performance.now() < end) {
      await client.echo.query('x');
      done++;
    }
  };
  const start = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const used = process.cpuUsage(cpu);
  if (name) {
    const list = cpuPerQuery[name] ?? [];
    list.push((used.user + used.system) / done);
    cpuPerQuery[name] = list;
  }
  return (done / (performance.now() - start)) * 1000;
}

const results: Record<string, number[]> = {};
for (const name of Object.keys(variants)) await round(variants[name]!()); // warm-up
const entries = Object.entries(variants);
for (let r = 0; r < rounds; r++) {
  // Rotate the order each round so garbage and warm-up left by one variant is not always billed to the next.
  for (const [name, make] of [
    ...entries.slice(r % entries.length),
    ...entries.slice(0, r % entries.length),
  ]) {
    const list = results[name] ?? [];
    list.push(await round(make(), name));
    results[name] = list;
  }
}
await server.close();

const bare = median(results['bare httpBatchLink']!);
console.log(
  `queries/s, median of ${rounds} alternating rounds of ${roundMs} ms, ${inFlight} in flight`,
);
for (const [name, xs] of Object.entries(results)) {
  const m = median(xs);
  const c = median(cpuPerQuery[name] ?? [0]);
  const cBare = median(cpuPerQuery['bare httpBatchLink'] ?? [1]);
  console.log(
    `${name.padEnd(52)} ${m.toFixed(0).padStart(7)} q/s ${((m / bare) * 100).toFixed(1).padStart(6)}%   ${c.toFixed(1).padStart(6)} µs CPU/query (${((cBare / c) * 100).toFixed(1)}% of bare's throughput-equivalent)`,
  );
}
