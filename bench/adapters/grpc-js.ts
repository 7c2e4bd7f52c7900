/**
 * @breakwater/grpc-js overhead: unary Echo throughput and p99 of a bare grpc-js
 * client, the same client with the full interceptor stack, and a client on a
 * routing channel (two targets, priority), against one in-process server on
 * 127.0.0.1:0. Concurrency 1 and 64; the three clients run in interleaved
 * rounds (rotated order) in the same process, so drift hits them alike.
 *
 * Run: node --import tsx bench/adapters/grpc-js.ts [--rounds 8] [--calls 4000]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  createEchoClient,
  type EchoClient,
  type EchoResponse,
  loadEchoPackageDefinition,
  startGrpcChaosServer,
} from '@breakwater/chaos';
import {
  createRoutingChannel,
  disableGrpcRetries,
  idempotentMethods,
  resilienceInterceptor,
} from '@breakwater/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { median } from '../harness/stats.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '8' },
    calls: { type: 'string', default: '4000' },
    // Comma-separated subset of bare,stack,routing (e.g. to profile one with --cpu-prof).
    only: { type: 'string' },
    concurrency: { type: 'string', default: '1,64' },
  },
});
const ROUNDS = Number(values.rounds);
const CALLS = Number(values.calls);

const server = await startGrpcChaosServer({ maxObservations: 1 });
const idempotent = idempotentMethods(loadEchoPackageDefinition());
// Every part on, none ever refusing: what it costs to carry the stack on the success path.
const stack = resilienceInterceptor({
  idempotent,
  deadline: { timeout: '10s' },
  circuitBreaker: { breaker: { failureThreshold: 5, openDurationMs: 10_000 } },
  rateLimit: { capacity: 1e9, refillPerSecond: 1e9 },
  bulkhead: { concurrency: 10_000 },
  retry: { attempts: 3 },
});
const routing = createRoutingChannel({
  idempotent,
  targets: [
    { id: 'a', address: server.address },
    { id: 'b', address: server.address },
  ],
});
const clients: Record<string, EchoClient> = {
  bare: createEchoClient(server.address, { ...disableGrpcRetries }),
  stack: createEchoClient(server.address, { ...disableGrpcRetries, interceptors: [stack] }),
  routing: createEchoClient('routed', { channelOverride: routing }),
};

const request = { message: 'bench' };
function call(client: EchoClient): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    client.Unary(request, (error: ServiceError | null, _value?: EchoResponse) =>
      error ? reject(error) : resolve(performance.now() - t0),
    );
  });
}

/**
 * `calls` calls with `concurrency` in flight; returns calls/s, every latency,
 * and process CPU µs per call (client and in-process server together: on a
 * loaded machine far steadier than throughput, and its ceiling).
 */
async function closedLoop(client: EchoClient, concurrency: number, calls: number) {
  const latencies: number[] = [];
  let left = calls;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) latencies.push(await call(client));
    }),
  );
  const cpu = process.cpuUsage(c0);
  return {
    throughput: (calls / (performance.now() - t0)) * 1000,
    latencies,
    cpuUs: (cpu.user + cpu.system) / calls,
  };
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

const names = values.only === undefined ? Object.keys(clients) : values.only.split(',');
const rows: string[] = [];
for (const concurrency of values.concurrency.split(',').map(Number)) {
  const calls = concurrency === 1 ? Math.max(500, CALLS / 4) : CALLS;
  // Warm-up: connections, JIT.
  for (const name of names) await closedLoop(clients[name] as EchoClient, concurrency, calls / 4);
  const throughput: Record<string, number[]> = {};
  const latencies: Record<string, number[]> = {};
  const cpu: Record<string, number[]> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(r + k) % names.length] as string;
      const result = await closedLoop(clients[name] as EchoClient, concurrency, calls);
      throughput[name] = [...(throughput[name] ?? []), result.throughput];
      latencies[name] = (latencies[name] ?? []).concat(result.latencies);
      cpu[name] = [...(cpu[name] ?? []), result.cpuUs];
    }
  }
  const bare = median(throughput.bare ?? throughput[names[0] as string] ?? []);
  for (const name of names) {
    const tp = median(throughput[name] ?? []);
    const sorted = (latencies[name] ?? []).sort((a, b) => a - b);
    // Paired per-round ratio: each round's stack run against that round's bare run.
    const paired = median(
      (throughput[name] ?? []).map((t, i) => t / ((throughput.bare ?? [])[i] ?? Number.NaN)),
    );
    rows.push(
      [
        `c=${concurrency}`.padEnd(5),
        name.padEnd(8),
        `${tp.toFixed(0).padStart(7)} calls/s`,
        `${((tp / bare) * 100).toFixed(1).padStart(6)}% of bare`,
        `paired ${(paired * 100).toFixed(1).padStart(6)}%`,
        `CPU ${median(cpu[name] ?? []).toFixed(1)} µs/call (bare/this ${((median(cpu.bare ?? []) / median(cpu[name] ?? [])) * 100).toFixed(1)}%)`,
        `p50 ${quantile(sorted, 0.5).toFixed(3)} ms`,
        `p99 ${quantile(sorted, 0.99).toFixed(3)} ms`,
      ].join('  '),
    );
  }
}

console.log(
  `unary Echo, ${ROUNDS} interleaved rounds, median throughput per client; load ${readFileSync('/proc/loadavg', 'utf8').trim()}`,
);
for (const row of rows) console.log(row);
for (const client of Object.values(clients)) client.close();
await server.close();
