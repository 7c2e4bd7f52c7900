/**
 * What a propagated deadline costs a grpc-js client *and server*, apart from
 * Breakwater: closed-loop unary calls against the chaos Echo server in a child
 * process, measuring throughput, client CPU per call (`process.cpuUsage`) and
 * server CPU per call (the child's threads' run time from
 * `/proc/<pid>/task/<tid>/schedstat`, in ns — `/proc/<pid>/stat` ticks are
 * 10 ms, too coarse for short rounds).
 *
 * Lanes (grpc-js's own retries off in all but `bare`, as the stack runs):
 * - `bare`            grpc-js defaults, no deadline (the adapters suite's baseline);
 * - `noRetries`       `'grpc.enable_retries': 0`;
 * - `header`          `noRetries` + a `grpc-timeout: 10000m` header, no client timer;
 * - `otherHeader`     `noRetries` + an `x-other: 10000m` header (any extra header);
 * - `deadline`        `noRetries` + a 10 s call deadline (grpc-js's timer and header);
 * - `stack`           the adapters suite's full `resilienceInterceptor` (deadline 10 s);
 * - `stackNoDeadline` the same stack without its deadline part.
 *
 * Run: cd bench && node --import tsx micro/grpc-header-cost.ts
 *      [--lanes bare,header,...] [--concurrency 64] [--rounds 30] [--round-ms 300]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  callMetadata,
  createEchoClient,
  type EchoClient,
  spawnGrpcChaosServer,
} from '@breakwater/chaos';
import { disableGrpcRetries } from '@breakwater/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { closedLoop } from '../harness/closed-loop.js';
import { processCpuUs } from '../harness/machine.js';
import { median, pairedRatios, runInterleaved } from '../harness/stats.js';
import {
  breakwaterGrpcLane,
  breakwaterGrpcOptions,
  grpcLane,
  type Lane,
} from '../suites/clients.js';

const { values } = parseArgs({
  options: {
    lanes: { type: 'string', default: 'bare,noRetries,header,otherHeader,deadline,stack' },
    concurrency: { type: 'string', default: '64' },
    rounds: { type: 'string', default: '30' },
    'round-ms': { type: 'string', default: '300' },
  },
});

const server = await spawnGrpcChaosServer({
  replica: 'bench',
  startTimeoutMs: 30_000,
  maxObservations: 1,
});
const target = server.address;
const full = {
  bulkhead: { concurrency: 10_000 },
  rateLimit: { capacity: 1e9, refillPerSecond: 1e9 },
};

/** A plain grpc-js lane sending one extra request header on every call. */
function headerLane(name: string, key: string): Lane {
  const client: EchoClient = createEchoClient(target, disableGrpcRetries);
  return {
    name,
    close: () => client.close(),
    describeError: (error) => String(error),
    call: ({ callId }) =>
      new Promise((resolve, reject) => {
        const metadata = callMetadata(callId);
        metadata.set(key, '10000m');
        client.Unary({ message: 'x' }, metadata, (error: ServiceError | null) =>
          error ? reject(error) : resolve({ replica: 'bench' }),
        );
      }),
  };
}

const factories: Record<string, () => Lane> = {
  bare: () => grpcLane('bare', target),
  noRetries: () => grpcLane('noRetries', target, disableGrpcRetries),
  header: () => headerLane('header', 'grpc-timeout'),
  otherHeader: () => headerLane('otherHeader', 'x-other'),
  deadline: () => grpcLane('deadline', target, disableGrpcRetries, 10_000),
  stack: () => breakwaterGrpcLane('stack', target, breakwaterGrpcOptions(full)),
  stackNoDeadline: () =>
    breakwaterGrpcLane(
      'stackNoDeadline',
      target,
      breakwaterGrpcOptions({ ...full, deadline: false }),
    ),
};

/** CPU µs the server child has run, all its threads. */
const serverCpuUs = () => processCpuUs(server.pid as number);

const names = values.lanes.split(',');
for (const name of names) {
  if (!(name in factories))
    throw new Error(`unknown lane ${name}; known: ${Object.keys(factories)}`);
}
const concurrency = Number(values.concurrency);
const roundMs = Number(values['round-ms']);
const lanes = new Map(names.map((name) => [name, (factories[name] as () => Lane)()]));
const clientCpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
const serverCpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
try {
  for (const lane of lanes.values()) {
    await closedLoop(() => lane.call({ callId: 'warm', index: 0 }), concurrency, 500);
  }
  const rounds = Object.fromEntries(
    names.map((name) => [
      name,
      async () => {
        const lane = lanes.get(name) as Lane;
        const c0 = process.cpuUsage();
        const s0 = serverCpuUs();
        const r = await closedLoop(
          () => lane.call({ callId: 'b', index: 0 }),
          concurrency,
          roundMs,
        );
        const calls = (r.throughput * roundMs) / 1000;
        const c = process.cpuUsage(c0);
        clientCpu[name]?.push((c.user + c.system) / calls);
        serverCpu[name]?.push((serverCpuUs() - s0) / calls);
        return r.throughput;
      },
    ]),
  );
  const throughput = await runInterleaved(rounds, Number(values.rounds));
  const base = throughput[names[0] as string] as number[];
  console.log(
    `c=${concurrency}, ${values.rounds} interleaved rounds of ${roundMs} ms; load ${readFileSync('/proc/loadavg', 'utf8').trim()}`,
  );
  for (const name of names) {
    const ratio = median(pairedRatios(throughput[name] as number[], base));
    console.log(
      [
        name.padEnd(16),
        `${median(throughput[name] as number[])
          .toFixed(0)
          .padStart(6)} calls/s`,
        `vs ${names[0]} ${(ratio * 100).toFixed(1).padStart(5)}%`,
        `client ${median(clientCpu[name] as number[])
          .toFixed(1)
          .padStart(6)} µs/call`,
        `server ${median(serverCpu[name] as number[])
          .toFixed(1)
          .padStart(6)} µs/call`,
      ].join('  '),
    );
  }
} finally {
  for (const lane of lanes.values()) lane.close();
  await server.close();
}
