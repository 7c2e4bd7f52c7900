/**
 * Adapter overhead: unary/query throughput and p99 of the same client bare and
 * with the full Breakwater stack, against a server in another process, at
 * concurrency 1 and 64, in interleaved rounds. Two controls run in the same
 * rounds: a second bare client (the A/A noise floor) and, for the gRPC
 * adapters, bare clients sending the stack's 10 s deadline (for nice-grpc one
 * that only sends it and one that also enforces it, as the stack does). Every client
 * runs in its own process (`harness/lane-child.ts`), one at a time.
 */
import { spawnGrpcChaosServer } from '@breakwater/chaos';
import {
  adapterTables,
  cpuCell,
  type DeadlineBaseline,
  headlineTarget,
  type Measured,
  paired,
  ratioCell,
} from '../harness/adapter-report.js';
import { type CommandChild, spawnCommandChild, spawnTrpcServer } from '../harness/children.js';
import { compareRounds, type RoundFigures } from '../harness/closed-loop.js';
import { processCpuUs } from '../harness/machine.js';
import { pct, type Suite } from '../harness/report.js';
import {
  ADAPTER_TITLES,
  type AdapterName,
  BULKHEAD,
  DEADLINE_BASELINES,
  DEADLINE_MS,
  type LaneSpec,
  RATE_LIMIT,
  STACK_DESCRIPTIONS,
  VARIANTS,
  type Variant,
} from './adapter-lanes.js';

/**
 * The variants measured for `adapter`: `VARIANTS`, or for a longer look at
 * one question `BENCH_ADAPTERS_VARIANTS` (e.g. `bare,bareDeadline,passThroughDeadline,stack`;
 * every adapter measured gets the same list, so use it with `BENCH_ADAPTERS_ONLY`).
 */
function variantsOf(adapter: AdapterName): readonly Variant[] {
  const list = process.env.BENCH_ADAPTERS_VARIANTS;
  return list ? (list.split(',') as Variant[]) : VARIANTS[adapter];
}

/** The deadline baselines of `adapters`, keyed by display name as the measured rows are. */
function deadlineBaselines(
  adapters: readonly AdapterName[],
): Record<string, readonly DeadlineBaseline[]> {
  return Object.fromEntries(adapters.map((a) => [ADAPTER_TITLES[a], DEADLINE_BASELINES[a]]));
}

/** Starts one lane child per variant of `adapter` (in parallel), against `address`. */
async function spawnLanes(
  adapter: AdapterName,
  address: string,
): Promise<Map<Variant, CommandChild<unknown>>> {
  const lanes = new Map<Variant, CommandChild<unknown>>();
  const started = await Promise.allSettled(
    variantsOf(adapter).map(async (variant) => {
      const spec: LaneSpec = { adapter, variant, address };
      lanes.set(variant, await spawnCommandChild('lane-child.ts', [JSON.stringify(spec)]));
    }),
  );
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) {
    await Promise.all([...lanes.values()].map((lane) => lane.close()));
    throw (failed as PromiseRejectedResult).reason;
  }
  return lanes;
}

async function measure(
  adapter: AdapterName,
  lanes: Map<Variant, CommandChild<unknown>>,
  serverPid: number | undefined,
  concurrency: number,
  rounds: number,
  roundMs: number,
): Promise<Measured> {
  const serverCpu = () => (serverPid === undefined ? Number.NaN : processCpuUs(serverPid));
  const runners = Object.fromEntries(
    [...lanes].map(([variant, lane]) => [
      variant,
      async (ms: number): Promise<RoundFigures> => {
        const before = serverCpu();
        const r = (await lane.command('run', { concurrency, ms })) as RoundFigures;
        return { ...r, serverCpuUs: (serverCpu() - before) / Math.max(1, r.calls) };
      },
    ]),
  );
  // The first concurrency also warms the JIT: at c=1, 300 ms is a few hundred calls.
  const warmupMs = concurrency === 1 ? 1500 : 300;
  const measured = await compareRounds(runners, { rounds, roundMs, warmupMs });
  return { adapter: ADAPTER_TITLES[adapter], concurrency, rounds: measured };
}

/** A positive integer from the environment variable `name`, undefined when unset. */
function envNumber(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer, got ${raw}`);
  }
  return value;
}

export const adaptersSuite: Suite = {
  name: 'adapters',
  title: 'Adapter overhead: throughput and p99, bare vs full stack',
  async run({ quick }) {
    // A longer run than `pnpm bench` has time for: BENCH_ADAPTERS_ROUNDS, _ROUND_MS, _ONLY.
    // Many short rounds: the host takes time in bursts, and a burst lands on one lane's
    // round. At c=1, 30 rounds of 300 ms put the same nice-grpc code at 84–103% of bare
    // in runs minutes apart; 200 rounds of 50 ms, at 93.0% and 92.5%.
    const rounds = envNumber('BENCH_ADAPTERS_ROUNDS') ?? (quick ? 4 : 80);
    const roundMs = envNumber('BENCH_ADAPTERS_ROUND_MS') ?? (quick ? 250 : 100);
    const grpcServer = await spawnGrpcChaosServer({
      replica: 'bench',
      startTimeoutMs: 30_000,
      maxObservations: 1,
    });
    const trpcServer = await spawnTrpcServer();
    const addresses: Record<AdapterName, string> = {
      'grpc-js': grpcServer.address,
      'nice-grpc': grpcServer.address,
      trpc: trpcServer.url,
    };
    const only = process.env.BENCH_ADAPTERS_ONLY?.split(',');
    const pids: Record<AdapterName, number | undefined> = {
      'grpc-js': grpcServer.pid,
      'nice-grpc': grpcServer.pid,
      trpc: trpcServer.pid,
    };
    const adapters = (Object.keys(VARIANTS) as AdapterName[]).filter(
      (a) => only === undefined || only.includes(a),
    );
    const results: Measured[] = [];
    const skipped: string[] = [];
    try {
      for (const adapter of adapters) {
        let lanes: Map<Variant, CommandChild<unknown>>;
        try {
          lanes = await spawnLanes(adapter, addresses[adapter]);
        } catch (error) {
          skipped.push(`${ADAPTER_TITLES[adapter]}: ${(error as Error).message}`);
          console.log(`  ${adapter}: not measured (${(error as Error).message})`);
          continue;
        }
        try {
          for (const concurrency of [1, 64]) {
            const label = `${ADAPTER_TITLES[adapter]} c=${concurrency}`;
            try {
              const r = await measure(adapter, lanes, pids[adapter], concurrency, rounds, roundMs);
              results.push(r);
              const vsDeadline = paired(r, 'stack', 'bareDeadline');
              const vsEnforced = paired(r, 'stack', 'bareDeadlineEnforced');
              const noDeadline = paired(r, 'stackNoDeadline', 'bare');
              console.log(
                `  ${label}: stack/bare ${pct(paired(r, 'stack', 'bare')?.median)} · A/A bare/bare ${ratioCell(paired(r, 'bareAgain', 'bare'))}${vsDeadline ? ` · stack/(bare + deadline) ${pct(vsDeadline.median)}` : ''}${vsEnforced ? ` · stack/(bare + enforced deadline) ${pct(vsEnforced.median)}` : ''}${noDeadline ? ` · (stack, no deadline)/bare ${pct(noDeadline.median)}` : ''}`,
              );
              if (process.env.BENCH_ADAPTERS_VARIANTS) {
                const base: Variant = r.rounds.bareDeadline ? 'bareDeadline' : 'bare';
                for (const v of Object.keys(r.rounds) as Variant[]) {
                  console.log(
                    `    ${v}/${base} ${ratioCell(paired(r, v, base))} · client CPU ${cpuCell(r, v, 'clientCpuUs')} µs/call · ${cpuCell(r, v, 'clientBytes', 0)} B/call`,
                  );
                }
              }
            } catch (error) {
              skipped.push(`${label}: ${(error as Error).message}`);
              console.log(`  ${label}: not measured (${(error as Error).message})`);
            }
          }
        } finally {
          await Promise.all([...lanes.values()].map((lane) => lane.close()));
        }
      }
    } finally {
      await grpcServer.close();
      await trpcServer.close();
    }

    return {
      tables: adapterTables(results, {
        deadlineMs: DEADLINE_MS,
        baselines: deadlineBaselines(adapters),
        skipped,
      }),
      targets: adapters.map((a) =>
        headlineTarget(
          ADAPTER_TITLES[a],
          results.filter((r) => r.adapter === ADAPTER_TITLES[a]),
        ),
      ),
      notes: [
        `Closed loop: at concurrency c, c workers each start the next call when the previous one settles. Each variant gets a warm-up (1.5 s before the c=1 rounds, which also warms the JIT; 300 ms before c=64), then ${rounds} rounds of ${roundMs} ms (many short rounds, because the host takes time in bursts and a burst lands on one lane's round: at c=1, 30 rounds of 300 ms put the same nice-grpc code at 84–103% of bare in runs minutes apart, 200 rounds of 50 ms at 93.0% and 92.5%); a round runs every variant once, back to back, the order rotating by one each round (A B C D, B C D A, …). Servers run in child processes (the chaos gRPC Echo server and the chaos tRPC server, no faults) on 127.0.0.1, and so does every client: one process per lane, started before the warm-up and idle while another lane runs. In one shared process the lanes shared a JIT: grpc-js's and nice-grpc's call paths saw every lane's objects and turned polymorphic, which slowed the stack lanes most (on the stub channel of the since-removed micro/adapter-cost.ts, grpc-js's stack costs 3 µs of CPU per call more than its bare client and nice-grpc's 3 µs less when each runs in a process of its own, but 12 and 20–24 µs more when they share one). Ratios are per-round throughput ratios (median and min–max over rounds); p99 is the median over rounds of each round's nearest-rank p99.`,
        `Four comparisons share those rounds. "Stack / bare" is the headline the ≥ 97% targets are judged on: the full stack against the same client sending no deadline. "Bare / bare (A/A)" pits two identical, separately created bare clients against each other, so its spread is the noise floor: a stack / bare figure inside it cannot be told apart from no overhead. "Stack / bare + deadline" (gRPC adapters, informative) compares the stack with a bare client sending the same ${DEADLINE_MS / 1000} s deadline, separating Breakwater's client work from what sending any deadline costs (the grpc-js server arms a timer for every call carrying grpc-timeout), one row per baseline; "stack without its deadline / bare" runs the same stack minus its deadline part.`,
        `At c=64 the closed loop runs in lockstep waves (the 64 calls complete together), so throughput ≈ 64 / (client time + server time per wave): work the server does per call lowers it as much as client work does.`,
        `nice-grpc sends no grpc-timeout of its own: a deadline call option means something only to a deadline middleware, and the official one (nice-grpc-client-middleware-deadline) enforces it on the client (a timer that aborts the call) without sending it. So both nice-grpc baselines write grpc-timeout: ${DEADLINE_MS}m as metadata on every call (the server arms the same timer as for grpc-js's deadline): "bare + deadline header" only sends it, nothing on the client enforces it; "bare + deadline header + deadline middleware" sends it and enforces it, as the stack does (and as grpc-js's deadline call option does, with a timer of its own).`,
        ...adapters.map(
          (a) =>
            `${ADAPTER_TITLES[a]} stack: ${STACK_DESCRIPTIONS[a]}; bulkhead ${BULKHEAD.concurrency} slots and a rate limit (${RATE_LIMIT.capacity} tokens) that never refuse.`,
        ),
      ],
      data: results,
    };
  },
};
