/**
 * Issue 19, `outage-recovery`: every client side by side in one process,
 * open-loop load at a fixed rate against one gRPC and one tRPC chaos server
 * (a child process counting attempts per client), an outage, then recovery.
 * How many attempts reach the server in the outage, how soon and how fully
 * each client succeeds again, and how hard it hits the server in its first
 * second back.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { median, runScenario } from '@breakwater/chaos';
import { spawnRecoveryServers } from '../../harness/children.js';
import {
  attemptsPerCall,
  countBetween,
  firstSuccessAfter,
  peakRate,
  successBetween,
} from '../../harness/recovery.js';
import { fmt, pct, type Suite, type Table, type TargetResult } from '../../harness/report.js';
import { connect, WARM_UP } from '../faults/common.js';
import { type OutageSettings, outageSettings } from './config.js';
import { breakwaterStacks, isRefusal, peerLanes, type StackLane } from './stacks.js';

/** One client's figures for one run. */
interface LaneFigures {
  /** Server attempts per call started in the outage. */
  outageApc: number | undefined;
  /** The same, for calls started from 1 s into the outage (circuits have tripped). */
  sustainedApc: number | undefined;
  /** Ms from recovery to the first success. */
  firstSuccessMs: number | undefined;
  success500: number | undefined;
  success2s: number | undefined;
  success10s: number | undefined;
  /** Success of calls started from 500 ms after recovery to the end. */
  successFrom500: number | undefined;
  /** Busiest 100 ms of the first second back at the server, per second. */
  peakRate: number;
  /** Busiest 100 ms of the first second back in calls the client started, per second (a stalled open loop catches up in a burst). */
  offeredPeak: number;
  /** The server's peak over the larger of the nominal rate and the offered peak. */
  peakRatio: number;
  /**
   * The goal's own measure: attempts the server saw in the whole first second
   * back over the larger of the nominal rate and the calls the client started
   * in it (a 100 ms bin also catches bunching, e.g. calls held while new
   * connections open, which is not more load).
   */
  firstSecondRatio: number;
  /** Server attempts per call of the calls started in the first second back: above 1 is retries, hedges or failovers. */
  firstSecondApc: number | undefined;
  /** Event-loop delay p99 of the client process during the run (the whole group's), ms. */
  loopDelayP99: number;
  /** Circuit transitions to open in the whole run. */
  openings: number;
  /** Calls started after recovery that an open circuit refused. */
  refusedAfter: number;
}

type Figure = keyof LaneFigures;

/** Every client of the suite, in table order. */
function allLanes(grpcAddress: string, trpcUrl: string): StackLane[] {
  return [...peerLanes(grpcAddress, trpcUrl), ...breakwaterStacks(grpcAddress, trpcUrl, {}, 1)];
}

interface RunFigures {
  lanes: Record<string, LaneFigures>;
  /** Event-loop delay of the client process, ms. */
  loopDelayP99: number;
  loopDelayMax: number;
}

/** Runs one outage of `outageMs` with clients `from` to `to` (table order) side by side. */
async function runOutage(
  outageMs: number,
  s: OutageSettings,
  from: number,
  to: number,
): Promise<RunFigures> {
  const servers = await spawnRecoveryServers(true);
  const built = allLanes(servers.grpcAddress, servers.trpcUrl);
  const lanes = built.slice(from, to);
  for (const l of built) if (!lanes.includes(l)) l.close();
  const openings = new Map<string, number>();
  const subscriptions = lanes.flatMap((l) =>
    l.breakers.map((b) =>
      b.onStateChange((change) => {
        if (change.to === 'open') openings.set(l.name, (openings.get(l.name) ?? 0) + 1);
      }),
    ),
  );
  let outageAt = 0;
  let recoveredAt = 0;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  try {
    await connect(lanes);
    loop.enable();
    const run = await runScenario({
      phases: [
        WARM_UP,
        {
          name: 'outage',
          kind: 'outage',
          durationMs: outageMs,
          enter: async () => {
            outageAt =
              s.mode === 'stopped'
                ? await servers.stop()
                : await servers.setFault({ errorRate: 1 });
          },
        },
        {
          name: 'recovery',
          kind: 'recovery',
          durationMs: s.recoveryMs,
          enter: async () => {
            recoveredAt =
              s.mode === 'stopped' ? await servers.start() : await servers.setFault(undefined);
          },
        },
      ],
      clients: lanes,
      rate: s.rate,
      // Closing a channel under a call that still retries would end it out of turn.
      drainTimeoutMs: 35_000,
    });
    loop.disable();
    const counts = await servers.counts();
    const arrivals = await servers.arrivals();
    const out: Record<string, LaneFigures> = {};
    for (const lane of lanes) {
      const calls = run.calls.filter((c) => c.client === lane.name);
      const upstream = peakRate(arrivals[lane.name] ?? [], recoveredAt);
      const offered = peakRate(
        calls.map((c) => c.startedAt),
        recoveredAt,
      );
      out[lane.name] = {
        outageApc: attemptsPerCall(calls, counts, outageAt, recoveredAt),
        sustainedApc: attemptsPerCall(calls, counts, outageAt + 1_000, recoveredAt),
        firstSuccessMs: firstSuccessAfter(calls, recoveredAt),
        success500: successBetween(calls, recoveredAt, 0, 500),
        success2s: successBetween(calls, recoveredAt, 0, 2_000),
        success10s: successBetween(calls, recoveredAt, 0, 10_000),
        successFrom500: successBetween(calls, recoveredAt, 500, s.recoveryMs),
        peakRate: upstream,
        offeredPeak: offered,
        peakRatio: upstream / Math.max(s.rate, offered),
        firstSecondRatio:
          countBetween(arrivals[lane.name] ?? [], recoveredAt, recoveredAt + 1_000) /
          Math.max(
            s.rate,
            countBetween(
              calls.map((c) => c.startedAt),
              recoveredAt,
              recoveredAt + 1_000,
            ),
          ),
        firstSecondApc: attemptsPerCall(calls, counts, recoveredAt, recoveredAt + 1_000),
        loopDelayP99: loop.percentile(99) / 1e6,
        openings: openings.get(lane.name) ?? 0,
        refusedAfter: calls.filter((c) => c.startedAt >= recoveredAt && isRefusal(c.error)).length,
      };
    }
    return {
      lanes: out,
      loopDelayP99: loop.percentile(99) / 1e6,
      loopDelayMax: loop.max / 1e6,
    };
  } finally {
    for (const sub of subscriptions) sub.dispose();
    for (const l of lanes) l.close();
    await servers.close();
  }
}

/** Median of figure `key` across runs (undefined when no run had it). */
function med(runs: readonly Record<string, LaneFigures>[], lane: string, key: Figure) {
  const values = runs
    .map((r) => r[lane]?.[key])
    .filter((v): v is number => v !== undefined && Number.isFinite(v));
  return values.length === 0 ? undefined : median(values);
}

const GOALS: {
  goal: string;
  key: Figure;
  ok: (v: number, rate: number) => boolean;
  show: (v: number | undefined, rate: number) => string;
}[] = [
  {
    goal: '≤ 0.2 server attempts per call during the sustained outage (from 1 s in)',
    key: 'sustainedApc',
    ok: (v) => v <= 0.2,
    show: (v) => fmt(v, 2),
  },
  {
    goal: 'first success within 250 ms of recovery',
    key: 'firstSuccessMs',
    ok: (v) => v <= 250,
    show: (v) => (v === undefined ? 'none' : `${fmt(v, 0)} ms`),
  },
  {
    goal: '≥ 99% success from 500 ms after recovery on',
    key: 'successFrom500',
    ok: (v) => v >= 0.99,
    show: (v) => pct(v, 1),
  },
  {
    goal: 'first second back: the upstream sees ≤ 1.5× the offered rate',
    key: 'firstSecondRatio',
    ok: (v) => v <= 1.5,
    show: (v) => (v === undefined ? '–' : `${fmt(v, 2)}×`),
  },
];

export const outageRecoverySuite: Suite = {
  name: 'outage-recovery',
  title: 'Issue 19: outage and recovery, every client side by side',
  async run({ quick }) {
    const s = outageSettings(quick);
    const tables: Table[] = [];
    const targets: TargetResult[] = [];
    const data: Record<string, unknown> = {};
    for (const outageS of s.outagesS) {
      const runs: RunFigures[] = [];
      const count = allLanes('127.0.0.1:1', 'http://127.0.0.1:1').map((l) => {
        l.close();
        return l;
      }).length;
      for (let i = 0; i < s.repeat; i++) {
        // Clients `group` at a time (all by default), each group against fresh servers.
        const group = s.group ?? count;
        const run: RunFigures = { lanes: {}, loopDelayP99: 0, loopDelayMax: 0 };
        for (let from = 0; from < count; from += group) {
          console.log(
            `   outage ${outageS} s, run ${i + 1} of ${s.repeat}, clients ${from + 1}–${Math.min(count, from + group)}`,
          );
          const part = await runOutage(outageS * 1_000, s, from, from + group);
          Object.assign(run.lanes, part.lanes);
          run.loopDelayP99 = Math.max(run.loopDelayP99, part.loopDelayP99);
          run.loopDelayMax = Math.max(run.loopDelayMax, part.loopDelayMax);
        }
        runs.push(run);
      }
      data[`${outageS}s`] = runs;
      const figures = runs.map((r) => r.lanes);
      const names = Object.keys(figures[0] ?? {});
      const m = (lane: string, key: Figure) => med(figures, lane, key);
      tables.push({
        title: `${outageS} s outage (${s.mode === 'stopped' ? 'servers stopped' : 'UNAVAILABLE / 503'}), ${s.rate} calls/s per client, ${s.group === undefined ? 'all clients at once' : s.group === 1 ? 'one client at a time' : `${s.group} clients at a time`}, ${s.repeat === 1 ? 'one run' : `median of ${s.repeat} runs`}`,
        columns: [
          'Client',
          'Attempts / call, outage',
          'Attempts / call, outage from 1 s',
          'First success after recovery',
          'Success, first 500 ms',
          'Success, first 2 s',
          'Success, first 10 s',
          'Success, 500 ms–10 s',
          'Upstream, first s back (× offered)',
          'Attempts / call, first s back',
          'Peak 100 ms upstream rate, first s back (× offered)',
          'Offered peak, first s back',
          'Circuit openings',
          'Refused after recovery',
          'Client event-loop delay p99',
        ],
        rows: names.map((lane) => {
          const peak = m(lane, 'peakRate');
          const first = m(lane, 'firstSuccessMs');
          return [
            lane,
            fmt(m(lane, 'outageApc'), 2),
            fmt(m(lane, 'sustainedApc'), 2),
            first === undefined ? 'none' : `${fmt(first, 0)} ms`,
            pct(m(lane, 'success500'), 1),
            pct(m(lane, 'success2s'), 1),
            pct(m(lane, 'success10s'), 1),
            pct(m(lane, 'successFrom500'), 1),
            `${fmt(m(lane, 'firstSecondRatio'), 2)}×`,
            fmt(m(lane, 'firstSecondApc'), 2),
            peak === undefined ? '–' : `${fmt(peak, 0)}/s (${fmt(m(lane, 'peakRatio'), 2)}×)`,
            `${fmt(m(lane, 'offeredPeak'), 0)}/s`,
            fmt(m(lane, 'openings'), 0),
            fmt(m(lane, 'refusedAfter'), 0),
            `${fmt(m(lane, 'loopDelayP99'), 0)} ms`,
          ];
        }),
        notes: [
          `Event-loop delay of the client process (worst group of each run): p99 ${runs.map((r) => fmt(r.loopDelayP99, 0)).join(' / ')} ms, max ${runs.map((r) => fmt(r.loopDelayMax, 0)).join(' / ')} ms.`,
        ],
      });
      const breakwater = names.filter((n) => n.startsWith('Breakwater'));
      for (const g of GOALS) {
        const misses = breakwater.filter((lane) => {
          const v = m(lane, g.key);
          return v === undefined || !g.ok(v, s.rate);
        });
        const worst = breakwater
          .map((lane) => `${lane.replace('Breakwater ', '')} ${g.show(m(lane, g.key), s.rate)}`)
          .join('; ');
        targets.push({
          target: `Breakwater, all ${breakwater.length} stacks, ${outageS} s outage: ${g.goal}`,
          figure: worst,
          met: misses.length === 0,
          ...(misses.length === 0 ? {} : { note: `missed by ${misses.join(', ')}` }),
        });
      }
    }
    return {
      tables,
      targets,
      notes: [
        `One process drives every client at ${s.rate} calls/s (open loop) against one chaos gRPC server and one chaos tRPC server in a child process; the servers count every attempt per client (by call id), with its arrival time. Timeline: 2 s healthy, the outage (${s.mode === 'stopped' ? 'both servers stop listening' : 'every attempt answered UNAVAILABLE / HTTP 503'}), then ${s.recoveryMs / 1000} s healthy. "Recovery" is the moment the server child applied it.`,
        'Attempts / call: server-counted attempts of the calls started in the window over their number (a refused call counts 0). First success: from recovery to the first successful call that finished after it (whenever it started). Success columns: calls started in that window after recovery. Upstream, first s back: the attempts the server saw in the whole first second after recovery over the larger of the nominal rate and the calls the client started in it (the goal’s measure); attempts / call, first s back: the server attempts of the calls started in that second (above 1: retries, hedges, failovers). Peak 100 ms upstream rate (stricter, not the goal): the busiest 100 ms of the first second after recovery at the server, scaled to /s, over the larger of the nominal rate and the offered peak (the busiest 100 ms of calls the client started then: an open loop stalled by the loaded machine catches up in a burst, which is offered load, not amplification). Client event-loop delay: p99 of the client process while that client ran; seconds of delay mean the loaded 2-core machine starved the process, and the recovery figures of that row measure that too.',
        'Peers as in "How the peers are configured" (3 attempts, 50 ms exponential backoff; cockatiel: ConsecutiveBreaker(5), halfOpenAfter 1 s). Breakwater "recommended": the options each README shows — protect: `protect(STANDARD_RESILIENCE)` (the core README example: the standard stack, `circuit: STANDARD_RESILIENCE.circuit`); grpc-js: `resilienceInterceptor({ idempotent: idempotentMethods(def) })`; nice-grpc: its README example (`idempotent`, `timeoutMs: 2000`, `retry.backoff.baseDelayMs: 10`; standard circuit); tRPC: its README example (`retry: { attempts: 3, backoff: { baseDelayMs: 10 } }`, `attemptTimeoutMs: 2000`). "defaults": no options (`resilienceInterceptor()`, `resilienceMiddleware()`, `resilienceLink()`: the standard stack; grpc-js without `idempotent` does not retry Unary), and `protect({ retry: {}, budget: {}, circuit: {} })` (each part at its own defaults — the breaker defaults are the standard circuit, 5 failures spanning 500 ms or half of 10 s, a probe every 200 ms; `protect()` turns every part off). nice-grpc and tRPC lanes get a breaker built from `STANDARD_RESILIENCE.circuit`, so its state changes can be counted (one method: the same circuit the stack would build). tRPC: `httpBatchLink` with `maxItems: 1`.',
      ],
      data,
    };
  },
};
