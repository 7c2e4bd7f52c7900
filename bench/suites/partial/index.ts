/**
 * Partial failures (issue 30): one replica of three dead, slow, hung or
 * flaky, every client side by side in one run — the peers a user already has
 * and Breakwater as its READMEs set it up. Faults are decided per call index
 * and attempt (the chaos servers' seeded draws), so every lane meets the same.
 */
import {
  type ChaosFault,
  type ChaosTarget,
  summarizeLatency as latencySummary,
  type ScenarioPhase,
  type ScenarioRun,
} from '@breakwater/chaos';
import { type LaneFigures, partialTargets } from '../../harness/partial-goals.js';
import { fmt, pct, type Suite, type TargetResult } from '../../harness/report.js';
import {
  callsIn,
  runLanes,
  type Servers,
  startServers,
  startTrpcServers,
} from '../faults/common.js';
import { DEADLINE_MS, isPeer, partialLanes, protocolOf } from './lanes.js';

/** The victim of each protocol (killed, slowed, hung) and the other two. */
interface Victims {
  grpc: [ChaosTarget, ChaosTarget, ChaosTarget];
  trpc: [ChaosTarget, ChaosTarget, ChaosTarget];
}

const both = (v: Victims, act: (t: ChaosTarget, i: number) => Promise<void> | undefined) =>
  Promise.all([...v.grpc.map(act), ...v.trpc.map(act)]).then(() => undefined);

/** A scenario: its name and its phases after the warm-up (`ms`: how long the fault lasts). */
interface PartialScenario {
  name: string;
  phases(v: Victims, ms: number): ScenarioPhase[];
}

const fault = (name: string, enter: () => Promise<void>, ms: number): ScenarioPhase => ({
  name,
  kind: 'fault',
  durationMs: ms,
  enter,
});

/** Acts on the first replica of each protocol only. */
const onVictim = (v: Victims, act: (t: ChaosTarget) => Promise<void>) =>
  both(v, (t, i) => (i === 0 ? act(t) : undefined));

/** A scenario of one phase that starts with `act` on every replica (`i`: its index). */
const perReplica = (
  name: string,
  phase: string,
  act: (t: ChaosTarget, i: number) => Promise<void> | undefined,
): PartialScenario => ({ name, phases: (v, ms) => [fault(phase, () => both(v, act), ms)] });

/** A scenario of one phase in which the victim (replica 0) has `chaos`. */
const victimFault = (name: string, phase: string, chaos: ChaosFault) =>
  perReplica(name, phase, (t, i) => (i === 0 ? t.setFault(chaos) : undefined));

const TAIL = { kind: 'tail', percent: 20, extraMs: 400 } as const;

/** The scenarios, in table order. */
export const SCENARIOS: PartialScenario[] = [
  perReplica('one replica killed', 'killed', (t, i) => (i === 0 ? t.kill() : undefined)),
  perReplica('killed + one long-tailed (20% +400 ms)', 'killed + tail', (t, i) =>
    i === 0 ? t.kill() : i === 1 ? t.setFault({ latency: TAIL }) : undefined,
  ),
  victimFault('one replica black-holed (health NOT_SERVING)', 'black hole', {
    hangRate: 1,
    notServing: true,
  }),
  victimFault('one replica black-holed (health still SERVING)', 'black hole', { hangRate: 1 }),
  victimFault('30% UNAVAILABLE on one replica', '30% errors', { errorRate: 0.3 }),
  {
    name: 'one replica killed, then restarted',
    phases: (v, ms) => [
      {
        name: 'killed',
        kind: 'outage',
        durationMs: ms / 2,
        enter: () => onVictim(v, (t) => t.kill()),
      },
      {
        name: 'restarted',
        kind: 'recovery',
        durationMs: ms / 2,
        restores: [v.grpc[0].id, v.trpc[0].id],
        enter: () => onVictim(v, (t) => t.restart()),
      },
    ],
  },
  // Load-aware selection's case: replica 0 takes 30-60 ms, the others 10-20 ms.
  perReplica('one replica 3× slower than the others', '3× slower', (t, i) =>
    t.setFault({
      latency: { kind: 'uniform', minMs: i === 0 ? 30 : 10, maxMs: i === 0 ? 60 : 20 },
    }),
  ),
];

/** One lane's figures over every phase after the warm-up. */
function figuresOf(
  run: ScenarioRun,
  lane: string,
  phases: readonly string[],
  sent: Map<string, number>,
): LaneFigures {
  const calls = phases.flatMap((p) => callsIn(run, lane, p));
  const failed = calls.filter((c) => !c.ok);
  const attempts = calls.reduce((n, c) => n + (sent.get(c.callId) ?? 0), 0);
  const latency = latencySummary(calls.map((c) => c.latencyMs));
  const report = run.report.clients.find((c) => c.client === lane);
  return {
    lane,
    protocol: protocolOf(lane),
    peer: isPeer(lane),
    successRate: calls.length === 0 ? undefined : (calls.length - failed.length) / calls.length,
    attemptsPerCall: calls.length === 0 ? undefined : attempts / calls.length,
    p50: latency.p50,
    p99: latency.p99,
    p999: latency.p999,
    failedUnsent: failed.filter((c) => (sent.get(c.callId) ?? 0) === 0).length,
    failed: failed.length,
    offered: calls.length,
    returnMs: report?.recoveryMs,
  };
}

const COLUMNS = [
  'Client',
  'Success',
  'Server attempts per call',
  'p50 ms',
  'p99 ms',
  'p99.9 ms',
  'Failed, no server saw them',
  'Restarted replica answering again',
];

function rowOf(f: LaneFigures, restarts: boolean): string[] {
  return [
    f.lane,
    pct(f.successRate),
    fmt(f.attemptsPerCall, 2),
    fmt(f.p50, 1),
    fmt(f.p99, 1),
    fmt(f.p999, 1),
    `${f.failedUnsent} of ${f.failed}`,
    !restarts ? '–' : f.returnMs === undefined ? 'not seen' : `${Math.round(f.returnMs)} ms`,
  ];
}

export const partialSuite: Suite = {
  name: 'partial',
  title: 'Partial failures: one replica of three dead, hung, slow or flaky (issue 30)',
  async run({ quick }) {
    const faultMs = quick ? 3_000 : 12_000;
    const rate = quick ? 20 : 50;
    const tables = [];
    const targets: TargetResult[] = [];
    const data: unknown[] = [];
    // `--scenarios killed,tail` runs only the scenarios whose name contains one of those.
    const wanted = process.env.BENCH_PARTIAL_SCENARIOS?.split(',');
    const scenarios = SCENARIOS.filter((s) => !wanted || wanted.some((w) => s.name.includes(w)));
    for (const scenario of scenarios) {
      const grpc = await startServers(3, false);
      const trpc = await startTrpcServers(3);
      const servers: Servers = {
        ...grpc,
        all: [...grpc.all, ...trpc.all],
        close: async () => {
          await Promise.all([grpc.close(), trpc.close()]);
        },
      };
      const victims = { grpc: grpc.grpc, trpc: trpc.all } as unknown as Victims;
      const lanes = partialLanes(
        grpc.grpcAddresses,
        trpc.urls.map((url, i) => ({ id: `t${i}`, url })),
      );
      const phases = scenario.phases(victims, faultMs);
      let sent = new Map<string, number>();
      const run = await runLanes(servers, lanes, phases, rate, (attempts) => {
        sent = new Map();
        for (const a of attempts) sent.set(a.callId, (sent.get(a.callId) ?? 0) + (a.count ?? 1));
      });
      const names = phases.map((p) => p.name);
      const figures = lanes.map((l) => figuresOf(run, l.name, names, sent));
      const restarts = phases.some((p) => p.restores !== undefined);
      tables.push({
        title: `${scenario.name}: ${names.join(' → ')}, ${faultMs / 1000} s after a 2 s warm-up; ${rate} calls/s per client, ${DEADLINE_MS / 1000} s deadline`,
        columns: COLUMNS,
        rows: figures.map((f) => rowOf(f, restarts)),
      });
      targets.push(...partialTargets(scenario.name, figures));
      data.push({ scenario: scenario.name, figures });
    }
    return {
      tables,
      targets,
      notes: [
        'Three gRPC replicas and three tRPC servers, each a child process; every client runs at once, open loop, 1 s deadline per call. Random faults are decided per (server seed, call index, attempt), so every client meets the same slow and failing calls. Figures cover every phase after the warm-up. "Failed, no server saw them": failed calls of which no server received an attempt (refused by a circuit or a spent budget, or no connection). Goal rows (issue 30): each Breakwater setup ≥ the best peer of its protocol − 0.5 point, ≤ that peer\'s server attempts per call + 0.1, p99 ≤ the fastest peer\'s.',
        'Peers: grpc-js round_robin without retries, with the service-config retryPolicy (3 attempts, 50 ms × 2), with a hedgingPolicy (3 attempts, 150 ms, UNAVAILABLE non-fatal); nice-grpc over round_robin with nice-grpc-client-middleware-retry (3 attempts, UNAVAILABLE) and -deadline; tRPC retryLink over round-robin links. Breakwater: createRoutingChannel (default least-loaded selection, grpcHealthProbe, idempotent Echo) with and without a 150 ms hedge and a 20% + 1/s budget; resilienceInterceptor({ idempotent }) over round_robin; resilienceMiddleware({ idempotent, timeoutMs: 1000 }); routingLink (default least-loaded selection, STANDARD_RESILIENCE.circuit, /healthz watched) with and without hedge + budget.',
      ],
      data,
    };
  },
};
