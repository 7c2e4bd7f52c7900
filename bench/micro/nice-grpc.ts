// nice-grpc unary throughput against an in-process chaos Echo server on 127.0.0.1:
// a bare client vs the same client through resilienceMiddleware (deadline, circuit
// breaker, rate limit, bulkhead, retry with a budget), in the same run, at
// concurrency 1 and 64. Target: >= 97% of bare.
// Run: cd bench && node --import tsx micro/nice-grpc.ts

import type { MethodDefinition as GrpcJsMethodDefinition } from '@grpc/grpc-js';
import { createChannel, createClient, createClientFactory } from 'nice-grpc';
import {
  ECHO_SERVICE,
  loadEchoPackageDefinition,
  startGrpcChaosServer,
} from '../../packages/chaos/src/index.js';
import { createRetryBudget } from '../../packages/core/src/index.js';
import { resilienceMiddleware } from '../../packages/nice-grpc/src/index.js';
import { median } from '../harness/stats.js';

type Unary = (request: { message: string }) => Promise<unknown>;

const server = await startGrpcChaosServer({ maxObservations: 1 });
const loaded = loadEchoPackageDefinition()[ECHO_SERVICE] as unknown as Record<
  string,
  GrpcJsMethodDefinition<unknown, unknown>
>;
const definition = { Unary: loaded.Unary as GrpcJsMethodDefinition<unknown, unknown> };
const bareChannel = createChannel(server.address);
const ourChannel = createChannel(server.address);
const bare = createClient(definition, bareChannel) as unknown as { Unary: Unary };
const ours = createClientFactory()
  .use(
    resilienceMiddleware({
      idempotent: 'all',
      deadline: { timeout: '5s' },
      circuitBreaker: {},
      rateLimit: { capacity: 1e9, refillPerSecond: 1e9 },
      bulkhead: { concurrency: 1_000 },
      retry: { budget: createRetryBudget({}) },
    }),
  )
  .create(definition, ourChannel) as unknown as { Unary: Unary };

/** Process CPU µs per call of the last `throughput` run (client and in-process server together). */
let cpuPerCall = 0;

/** Calls per second over `durationMs`, `concurrency` loops issuing calls back to back. */
async function throughput(client: { Unary: Unary }, concurrency: number, durationMs: number) {
  const end = performance.now() + durationMs;
  const cpu = process.cpuUsage();
  let calls = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await client.Unary({ message: 'x' });
        calls++;
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  cpuPerCall = (used.user + used.system) / calls;
  return (calls * 1000) / durationMs;
}

for (const concurrency of [1, 64]) {
  await throughput(bare, concurrency, 500);
  await throughput(ours, concurrency, 500);
  const bareRuns: number[] = [];
  const ourRuns: number[] = [];
  const bareCpu: number[] = [];
  const ourCpu: number[] = [];
  // Alternate short rounds: load from other jobs on the machine hits both sides alike.
  for (let round = 0; round < 8; round++) {
    bareRuns.push(await throughput(bare, concurrency, 400));
    bareCpu.push(cpuPerCall);
    ourRuns.push(await throughput(ours, concurrency, 400));
    ourCpu.push(cpuPerCall);
  }
  const b = median(bareRuns);
  const o = median(ourRuns);
  const bc = median(bareCpu);
  const oc = median(ourCpu);
  // CPU per call is steadier than wall throughput on a shared machine: it is the ceiling on throughput.
  console.log(
    `concurrency ${String(concurrency).padStart(2)}: CPU per call bare ${bc.toFixed(0)} µs, resilienceMiddleware ${oc.toFixed(0)} µs (+${(oc - bc).toFixed(1)} µs) → CPU-bound throughput ${((bc / oc) * 100).toFixed(1)}% of bare`,
  );
  console.log(
    `concurrency ${String(concurrency).padStart(2)}: bare ${b.toFixed(0)} calls/s, resilienceMiddleware ${o.toFixed(0)} calls/s = ${((o / b) * 100).toFixed(1)}% of bare (best ${((Math.max(...ourRuns) / Math.max(...bareRuns)) * 100).toFixed(1)}%)`,
  );
}

bareChannel.close();
ourChannel.close();
await server.close();
