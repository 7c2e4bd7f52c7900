/**
 * Adapter overhead: unary/query throughput and p99 of the same client bare
 * and with the full Breakwater stack, against a server in another process,
 * at concurrency 1 and 64, in alternating rounds (A B, B A, …).
 */
import { spawnGrpcChaosServer } from '@breakwater/chaos';
import { spawnTrpcServer } from '../harness/children.js';
import { closedLoop } from '../harness/closed-loop.js';
import { fmt, fx, pct, type Suite, type Table, type TargetResult } from '../harness/report.js';
import { latencySummary, pairedRatios, runInterleaved, spread } from '../harness/stats.js';
import {
  breakwaterGrpcLane,
  breakwaterGrpcOptions,
  breakwaterNiceLane,
  breakwaterNiceOptions,
  breakwaterTrpcLinks,
  grpcLane,
  type Lane,
  niceBareLane,
  trpcLane,
  trpcTerminal,
} from './clients.js';

// The full stack adds what the fault runs leave out: a bulkhead and a rate limit that never refuse.
const bulkhead = { concurrency: 10_000 };
const rateLimit = { capacity: 1e9, refillPerSecond: 1e9 };

interface Pair {
  adapter: string;
  bare: () => Lane;
  stack: () => Lane;
  stackDescription: string;
}

interface PairResult {
  adapter: string;
  concurrency: number;
  bare: { throughput: number[]; p99: number[] };
  stack: { throughput: number[]; p99: number[] };
}

async function measurePair(
  pair: Pair,
  concurrency: number,
  rounds: number,
  roundMs: number,
): Promise<PairResult> {
  const bare = pair.bare();
  const stack = pair.stack();
  const call = (lane: Lane) => () => lane.call({ callId: 'bench', index: 0 });
  const p99: Record<string, number[]> = { bare: [], stack: [] };
  // Warm both (connections, JIT) before the first measured round.
  await closedLoop(call(bare), concurrency, 300);
  await closedLoop(call(stack), concurrency, 300);
  const round = (name: 'bare' | 'stack', lane: Lane) => async () => {
    const r = await closedLoop(call(lane), concurrency, roundMs);
    if (r.errors > 0)
      throw new Error(`${pair.adapter} ${name}: ${r.errors} calls failed on a healthy server`);
    p99[name]?.push(latencySummary(r.latencies).p99 ?? Number.NaN);
    return r.throughput;
  };
  const out = await runInterleaved(
    { bare: round('bare', bare), stack: round('stack', stack) },
    rounds,
  );
  bare.close();
  stack.close();
  return {
    adapter: pair.adapter,
    concurrency,
    bare: { throughput: out.bare as number[], p99: p99.bare as number[] },
    stack: { throughput: out.stack as number[], p99: p99.stack as number[] },
  };
}

export const adaptersSuite: Suite = {
  name: 'adapters',
  title: 'Adapter overhead: throughput and p99, bare vs full stack',
  async run({ quick }) {
    const rounds = quick ? 2 : 6;
    const roundMs = quick ? 400 : 1000;
    const grpcServer = await spawnGrpcChaosServer({ replica: 'bench', startTimeoutMs: 30_000 });
    const trpcServer = await spawnTrpcServer();
    const target = grpcServer.address;
    const pairs: Pair[] = [
      {
        adapter: 'grpc-js',
        bare: () => grpcLane('bare', target),
        stack: () =>
          breakwaterGrpcLane('stack', target, breakwaterGrpcOptions({ bulkhead, rateLimit })),
        stackDescription:
          'resilienceInterceptor: deadline 10 s, circuit breaker, rate limit, bulkhead, retry (3 attempts, budget)',
      },
      {
        adapter: 'nice-grpc',
        bare: () => niceBareLane('bare', target),
        stack: () =>
          breakwaterNiceLane('stack', target, { ...breakwaterNiceOptions(), bulkhead, rateLimit }),
        stackDescription:
          'resilienceMiddleware: deadline 10 s, circuit breaker, rate limit, bulkhead, retry (3 attempts, budget)',
      },
      {
        adapter: 'tRPC (httpBatchLink)',
        bare: () => trpcLane('bare', [trpcTerminal(trpcServer.url)]),
        stack: () =>
          trpcLane(
            'stack',
            breakwaterTrpcLinks(trpcTerminal(trpcServer.url), {
              bulkhead: { pool: { concurrency: 10_000 } },
            }),
          ),
        stackDescription:
          'resilienceLink: bulkhead, timeout 10 s, retry (3 attempts, budget), circuit breaker',
      },
    ];
    const results: PairResult[] = [];
    const skipped: string[] = [];
    try {
      for (const pair of pairs) {
        for (const concurrency of [1, 64]) {
          try {
            const r = await measurePair(pair, concurrency, rounds, roundMs);
            results.push(r);
            const ratio = spread(pairedRatios(r.stack.throughput, r.bare.throughput)).median;
            console.log(`  ${pair.adapter} c=${concurrency}: stack/bare throughput ${pct(ratio)}`);
          } catch (error) {
            skipped.push(`${pair.adapter} c=${concurrency}: ${(error as Error).message}`);
            console.log(
              `  ${pair.adapter} c=${concurrency}: not measured (${(error as Error).message})`,
            );
          }
        }
      }
    } finally {
      await grpcServer.close();
      await trpcServer.close();
    }

    const rows = results.map((r) => {
      const ratios = spread(pairedRatios(r.stack.throughput, r.bare.throughput));
      const bt = spread(r.bare.throughput);
      const st = spread(r.stack.throughput);
      return [
        r.adapter,
        String(r.concurrency),
        `${fmt(bt.median, 0)} (${fmt(bt.min, 0)}–${fmt(bt.max, 0)})`,
        `${fmt(st.median, 0)} (${fmt(st.min, 0)}–${fmt(st.max, 0)})`,
        `${pct(ratios.median)} [${pct(ratios.min)}–${pct(ratios.max)}]`,
        fmt(spread(r.bare.p99).median, 2),
        fmt(spread(r.stack.p99).median, 2),
        fx(spread(pairedRatios(r.stack.p99, r.bare.p99)).median),
      ];
    });
    const table: Table = {
      title:
        'Throughput (calls/s) and p99 latency (ms), bare client vs the same client with the full stack',
      columns: [
        'Adapter',
        'Concurrency',
        'Bare calls/s median (min–max)',
        'Stack calls/s median (min–max)',
        'Stack / bare (median [min–max] of rounds)',
        'Bare p99 ms',
        'Stack p99 ms',
        'p99 stack / bare',
      ],
      rows,
      ...(skipped.length ? { notes: skipped.map((s) => `not measured: ${s}`) } : {}),
    };
    const targets: TargetResult[] = [];
    for (const adapter of pairs.map((p) => p.adapter)) {
      const mine = results.filter((r) => r.adapter === adapter);
      if (mine.length === 0) {
        targets.push({
          target: `${adapter} adapter ≥ 97% of bare throughput`,
          figure: '–',
          met: null,
          note: 'not measured: see the adapter table',
        });
        continue;
      }
      const worst = Math.min(
        ...mine.map((r) => spread(pairedRatios(r.stack.throughput, r.bare.throughput)).median),
      );
      const figure = mine
        .map(
          (r) =>
            `c=${r.concurrency}: ${pct(spread(pairedRatios(r.stack.throughput, r.bare.throughput)).median)}`,
        )
        .join(', ');
      targets.push({
        target: `${adapter} adapter ≥ 97% of bare throughput`,
        figure,
        met: worst >= 0.97,
        ...(worst >= 0.97
          ? {}
          : {
              note: `short by ${((0.97 - worst) * 100).toFixed(1)} points at the worst concurrency`,
            }),
      });
    }
    return {
      tables: [table],
      targets,
      notes: [
        `Closed loop: at concurrency c, c workers each start the next call when the previous one settles. ${rounds} rounds of ${roundMs} ms per variant, alternating bare/stack (A B, B A, …) after a 300 ms warm-up each. Servers run in child processes (the chaos gRPC Echo server and the chaos tRPC server, no faults) on 127.0.0.1, so the client process measures only the client. "Stack / bare" is the per-round throughput ratio (median and min–max over rounds); p99 is the median over rounds of each round's nearest-rank p99.`,
        ...pairs.map(
          (p) =>
            `${p.adapter} stack: ${p.stackDescription}; bulkhead ${bulkhead.concurrency} slots and a rate limit that never refuse for grpc-js/nice-grpc.`,
        ),
      ],
      data: results,
    };
  },
};
