/**
 * Overload (issue 34): one gRPC server of fixed capacity (a child process,
 * `workers` × `serviceMs`, an unbounded FIFO queue in front, no cancellation
 * checks), clients offering a multiple of that capacity open loop with a
 * 500 ms deadline. Every lane meets the same server and the same schedule,
 * one after the other.
 */
import {
  type CapacitySpec,
  type ChildGrpcChaosServer,
  runOpenLoop,
  spawnGrpcChaosServer,
} from '@breakwater/chaos';
import {
  type CallSample,
  type CellFigures,
  cellFigures,
  goodputSeries,
  overloadTargets,
  recoveryMs,
  type Tier,
  tierFigures,
} from '../../harness/overload-goals.js';
import { fmt, pct, type Suite, type Table, type TargetResult } from '../../harness/report.js';
import { ADAPTIVE_LANE, DEADLINE_MS, type LaneSpec, overloadLanes } from './lanes.js';

/** The server of issue 34; `--quick` gives each call 4× the work, so a shared 2-core host sends a quarter of the calls. */
const FULL_SERVER: CapacitySpec = { workers: 8, serviceMs: 10 };
const QUICK_SERVER: CapacitySpec = { workers: 8, serviceMs: 40 };
/** Offered loads, as multiples of capacity. */
const LOADS = [0.5, 1, 1.5, 3];
const BUCKET_MS = 100;
/** Recovery reads goodput averaged over this many buckets (300 ms). */
const SMOOTHING = 3;

interface Timing {
  server: CapacitySpec;
  /** Schedule length of one run, ms. */
  runMs: number;
  /** Leading part of a run left out of its figures (a limit finding its level), ms. */
  warmMs: number;
  /** Halving run: time at full capacity, then at half, ms. */
  beforeMs: number;
  afterMs: number;
}

const FULL: Timing = {
  server: FULL_SERVER,
  runMs: 6_000,
  warmMs: 1_000,
  beforeMs: 3_000,
  afterMs: 3_000,
};
const QUICK: Timing = {
  server: QUICK_SERVER,
  runMs: 2_000,
  warmMs: 500,
  beforeMs: 1_000,
  afterMs: 2_000,
};

/** The server, and the capacity it has between runs. */
interface Bench {
  server: ChildGrpcChaosServer;
  shape: CapacitySpec;
}

interface Run {
  samples: CallSample[];
  startedAt: number;
  server: { served: number; wasted: number };
}

/**
 * One lane against the server: `rate` calls/s open loop for `ms`, then the
 * server's queue flushed (every call still in it was abandoned: it counts as
 * wasted, as it would have when served) and its counts read and reset.
 */
async function runLane(
  { server, shape }: Bench,
  spec: LaneSpec,
  rate: number,
  ms: number,
  tierOf: (index: number) => Tier = () => 'default',
  /** Called as the schedule starts. */
  onStart?: () => void,
): Promise<Run> {
  const lane = spec.create(server.address);
  try {
    await lane.call('critical'); // connects
    await server.reset();
    const samples: CallSample[] = [];
    const loop = runOpenLoop({
      rate,
      durationMs: ms,
      send: async ({ index, scheduledAt, startedAt }) => {
        const tier = tierOf(index);
        const outcome = await lane.call(tier);
        samples.push({ scheduledAt, startedAt, endedAt: Date.now(), outcome, tier });
      },
    });
    const startedAt = Date.now();
    onStart?.();
    await loop;
    await server.setCapacity({ ...shape, workers: 1_000_000 });
    for (;;) {
      const stats = await server.capacityStats();
      if (stats.busy === 0 && stats.queued === 0) {
        await server.setCapacity(shape);
        return { samples, startedAt, server: stats };
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    lane.close();
  }
}

const CELL_COLUMNS = [
  'Client',
  'Offered',
  'Goodput /s',
  'Of capacity',
  'p50 ms',
  'p99 ms',
  'Refused',
  'Server work wasted',
  'Client start lag, max ms',
];

const cellRow = (c: CellFigures, capacity: number) => [
  c.lane,
  `${c.offered}× (${Math.round(c.offered * capacity)}/s)`,
  fmt(c.goodput, 0),
  pct(c.goodputShare),
  fmt(c.p50, 1),
  fmt(c.p99, 1),
  pct(c.refused),
  pct(c.wasted),
  fmt(c.lagMs, 0),
];

export const overloadSuite: Suite = {
  name: 'overload',
  title: 'Overload: a server of fixed capacity offered 0.5× to 3× of it (issue 34)',
  async run({ quick }) {
    const t = quick ? QUICK : FULL;
    const shape = t.server;
    const capacity = (shape.workers * 1000) / shape.serviceMs;
    const lanes = overloadLanes(shape.workers);
    const server = await spawnGrpcChaosServer({ replica: 'saturating', capacity: shape });
    const bench: Bench = { server, shape };
    const tables: Table[] = [];
    const data: Record<string, unknown> = {};
    try {
      const cells: CellFigures[] = [];
      for (const offered of LOADS) {
        for (const spec of lanes) {
          const run = await runLane(bench, spec, offered * capacity, t.runMs);
          cells.push(
            cellFigures(run.samples, {
              lane: spec.name,
              offered,
              fromMs: run.startedAt + t.warmMs,
              toMs: run.startedAt + t.runMs,
              capacity: capacity,
              server: run.server,
            }),
          );
        }
      }
      tables.push({
        title: `${shape.workers} workers × ${shape.serviceMs} ms (capacity ${capacity}/s), ${DEADLINE_MS} ms deadline, ${t.runMs / 1000} s per run (figures after a ${t.warmMs / 1000} s warm-up)`,
        columns: CELL_COLUMNS,
        rows: cells.map((c) => cellRow(c, capacity)),
      });

      // Capacity halves mid-run; the offered load stays at the original capacity (2× the new one).
      const halved: Record<string, { series: number[]; recovery: number | undefined }> = {};
      const halvedRows: string[][] = [];
      const fromMs = -500;
      const toMs = 2_000;
      for (const spec of lanes) {
        let halvedAt = 0;
        const run = await runLane(bench, spec, capacity, t.beforeMs + t.afterMs, undefined, () =>
          setTimeout(() => {
            halvedAt = Date.now();
            void server.setCapacity({ ...shape, workers: shape.workers / 2 });
          }, t.beforeMs),
        );
        const series = goodputSeries(run.samples, halvedAt + fromMs, halvedAt + toMs, BUCKET_MS);
        const change = -fromMs / BUCKET_MS;
        const recovery = recoveryMs(series, change, BUCKET_MS, 0.9 * (capacity / 2), SMOOTHING);
        halved[spec.name] = { series, recovery };
        const after = series.slice(change);
        halvedRows.push([
          spec.name,
          fmt(series.slice(0, change).reduce((a, b) => a + b, 0) / change, 0),
          fmt(after.reduce((a, b) => a + b, 0) / after.length, 0),
          recovery === undefined ? 'not back' : `${recovery} ms`,
          `${series
            .slice(0, change)
            .map((g) => Math.round(g))
            .join(' ')} ▸ ${after.map((g) => Math.round(g)).join(' ')}`,
        ]);
      }
      tables.push({
        title: `Capacity halves mid-run (${shape.workers} → ${shape.workers / 2} workers, new capacity ${capacity / 2}/s) while ${capacity} calls/s are offered`,
        columns: [
          'Client',
          'Goodput /s before',
          'Goodput /s after',
          `Back to ≥ 90% of ${capacity / 2}/s (${SMOOTHING * BUCKET_MS} ms average)`,
          `Goodput /s per ${BUCKET_MS} ms, ${fromMs / 1000} s ▸ halving ▸ +${toMs / 1000} s`,
        ],
        rows: halvedRows,
      });

      // Two tiers, alternating calls, at 1.5× capacity.
      const tierRows: string[][] = [];
      const tiers: Record<string, ReturnType<typeof tierFigures>[]> = {};
      for (const spec of lanes) {
        const run = await runLane(bench, spec, 1.5 * capacity, t.runMs, (i) =>
          i % 2 === 0 ? 'critical' : 'sheddable',
        );
        const measured = run.samples.filter((s) => s.scheduledAt >= run.startedAt + t.warmMs);
        const critical = tierFigures(measured, 'critical');
        const sheddable = tierFigures(measured, 'sheddable');
        tiers[spec.name] = [critical, sheddable];
        tierRows.push([
          spec.name,
          pct(critical.success),
          String(critical.refused),
          pct(sheddable.success),
          String(sheddable.refused),
        ]);
      }
      tables.push({
        title: `Two tiers at 1.5× capacity: every other call critical, the rest sheddable (${t.runMs / 1000} s)`,
        columns: [
          'Client',
          'Critical success',
          'Critical refused',
          'Sheddable success',
          'Sheddable refused',
        ],
        rows: tierRows,
      });

      const unloadedP99 = cells.find((c) => c.lane === 'no limit' && c.offered === 0.5)?.p99;
      const adaptive = lanes.find((l) => l.name === ADAPTIVE_LANE);
      const [critical, sheddable] = tiers[ADAPTIVE_LANE] ?? [];
      const targets: TargetResult[] =
        adaptive && critical && sheddable
          ? overloadTargets({
              lane: ADAPTIVE_LANE,
              cells: cells.filter((c) => c.lane === ADAPTIVE_LANE),
              unloadedP99,
              recoveryMs: halved[ADAPTIVE_LANE]?.recovery,
              critical,
              sheddable,
            })
          : [
              {
                target: 'overload: every goal of the adaptive limit (issue 34)',
                figure: '–',
                met: null,
                note: 'the adaptive lane did not run',
              },
            ];
      Object.assign(data, { cells, halved, tiers, unloadedP99 });
      return {
        tables,
        targets,
        notes: [
          `The server is a chaos gRPC server in a child process with \`capacity: { workers: ${shape.workers}, serviceMs: ${shape.serviceMs} }\`: at most ${shape.workers} calls served at once, ${shape.serviceMs} ms of simulated work each, the rest waiting in an unbounded FIFO queue. Like most servers it does not check cancellation, so a queued call whose client gave up is still served: "Server work wasted" is the share of its served calls nobody was waiting for any more. Clients: one grpc-js client each, open loop (the same evenly spaced schedule for every lane), a ${DEADLINE_MS} ms deadline, no retries; lanes run one after another against the same server. Goodput: calls answered within their deadline per second; latency counts from the call's start, over the calls the client's limiter admitted ("Client start lag": how far behind its schedule the client process fell, a loaded host's mark); "Refused": calls the client's limiter turned away.`,
          `Unloaded p99 (no limit at 0.5×): ${fmt(unloadedP99, 1)} ms. Breakwater lanes are \`resilienceInterceptor\` with only \`concurrency\` on (no retry, circuit, budget); cockatiel's \`bulkhead(${shape.workers})\` has no queue and is sized to the server's workers.`,
        ],
        data,
      };
    } finally {
      await server.close();
    }
  },
};
