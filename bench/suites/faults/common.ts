/**
 * Shared pieces of the fault benchmarks: chaos servers as scenario targets,
 * the standard set of lanes, and per-phase numbers from a scenario run.
 */
import {
  type AttemptRecord,
  type CallRecord,
  type ChaosFault,
  type ChaosTarget,
  grpcChildTarget,
  runScenario,
  type ScenarioPhase,
  type ScenarioRun,
  spawnGrpcChaosServer,
  summarizeLatency,
} from '@breakwater/chaos';
import { spawnTrpcServer, trpcChildTarget } from '../../harness/children.js';
import { fmt, pct } from '../../harness/report.js';
import {
  breakwaterGrpcLane,
  breakwaterGrpcOptions,
  breakwaterNiceLane,
  breakwaterTrpcLinks,
  cockatielGrpcLane,
  grpcLane,
  grpcServiceConfig,
  type Lane,
  niceRetryLane,
  trpcLane,
  trpcRetryLinks,
  trpcTerminal,
} from '../clients.js';

/** Chaos servers of one scenario, closed together. */
export interface Servers {
  grpc: ChaosTarget[];
  grpcAddresses: string[];
  trpc: ChaosTarget | undefined;
  trpcUrl: string | undefined;
  all: ChaosTarget[];
  close(): Promise<void>;
}

/**
 * Starts `replicas` gRPC chaos servers (ids r0, r1, …) and optionally one tRPC
 * chaos server, every one a child process: a server sharing the benchmark's
 * event loop stalls whenever the clients do, and its stalls then expire the
 * deadlines of exactly the clients that set one.
 */
export async function startServers(replicas: number, withTrpc: boolean): Promise<Servers> {
  const children = await Promise.all(
    Array.from({ length: replicas }, (_, i) =>
      spawnGrpcChaosServer({ replica: `r${i}`, seed: i + 1, startTimeoutMs: 30_000 }),
    ),
  );
  const grpc = children.map((c, i) => grpcChildTarget(c, `r${i}`));
  const trpcServer = withTrpc ? await spawnTrpcServer({ name: 'trpc', seed: 7 }) : undefined;
  const trpc = trpcServer ? trpcChildTarget(trpcServer, 'trpc') : undefined;
  return {
    grpc,
    grpcAddresses: children.map((c) => c.address),
    trpc,
    trpcUrl: trpcServer?.url,
    all: trpc ? [...grpc, trpc] : grpc,
    close: async () => {
      await Promise.all(children.map((c) => c.close()));
      await trpcServer?.close();
    },
  };
}

/**
 * `count` tRPC chaos servers in child processes (ids and reply names t0, t1,
 * …), as scenario targets, with their URLs.
 */
export async function startTrpcServers(count: number): Promise<Servers & { urls: string[] }> {
  const children = await Promise.all(
    Array.from({ length: count }, (_, i) => spawnTrpcServer({ name: `t${i}`, seed: i + 1 })),
  );
  const all = children.map((c, i) => trpcChildTarget(c, `t${i}`));
  return {
    grpc: [],
    grpcAddresses: [],
    trpc: undefined,
    trpcUrl: undefined,
    all,
    urls: children.map((c) => c.url),
    close: async () => {
      await Promise.all(children.map((c) => c.close()));
    },
  };
}

/** Sets `fault` on every target. */
export async function setFaultAll(
  targets: readonly ChaosTarget[],
  fault: ChaosFault | undefined,
): Promise<void> {
  await Promise.all(targets.map((t) => t.setFault(fault)));
}

/** Every server-side attempt of every target. */
export async function allAttempts(targets: readonly ChaosTarget[]) {
  return (await Promise.all(targets.map((t) => t.attempts()))).flat();
}

/** Name of the Breakwater lanes without a retry budget (the outage run's reference for the budget). */
export const NO_BUDGET = ', no retry budget';

/** The gRPC lanes every retry comparison runs, against one replica (`noBudget`: plus Breakwater grpc-js without a retry budget). */
export function grpcLanes(address: string, noBudget = false): Lane[] {
  return [
    grpcLane('grpc-js, no resilience', address),
    grpcLane('grpc-js retryPolicy', address, grpcServiceConfig({ retry: true })),
    grpcLane(
      'grpc-js retryPolicy + retryThrottling',
      address,
      grpcServiceConfig({ retry: true, throttle: true }),
    ),
    niceRetryLane('nice-grpc + retry middleware', address),
    cockatielGrpcLane('cockatiel wrap(retry, breaker) + grpc-js', address),
    breakwaterGrpcLane('Breakwater grpc-js', address),
    breakwaterNiceLane('Breakwater nice-grpc', address),
    ...(noBudget
      ? [
          breakwaterGrpcLane(
            `Breakwater grpc-js${NO_BUDGET}`,
            address,
            breakwaterGrpcOptions({}, false),
          ),
        ]
      : []),
  ];
}

/** The tRPC lanes every retry comparison runs, against one server (`noBudget`: plus Breakwater tRPC without a retry budget). */
export function trpcLanes(url: string, noBudget = false): Lane[] {
  const terminal = () => trpcTerminal(url, 1);
  return [
    trpcLane('tRPC, no resilience', [terminal()]),
    trpcLane('tRPC retryLink', trpcRetryLinks(terminal())),
    trpcLane('Breakwater tRPC', breakwaterTrpcLinks(terminal())),
    ...(noBudget
      ? [trpcLane(`Breakwater tRPC${NO_BUDGET}`, breakwaterTrpcLinks(terminal(), {}, false))]
      : []),
  ];
}

/** Both lane sets on one replica and one tRPC server (used where the load is light). */
export function standardLanes(grpcAddress: string, trpcUrl: string | undefined): Lane[] {
  return [...grpcLanes(grpcAddress), ...(trpcUrl ? trpcLanes(trpcUrl) : [])];
}

/**
 * Runs the same timeline twice: the gRPC lanes against a fresh replica, then
 * the tRPC lanes against a fresh tRPC server. Two smaller runs keep a 2-core
 * machine (and the single server of each run) below saturation, which one run
 * of ten clients did not.
 */
export async function runSplit(
  phases: (servers: Servers) => ScenarioPhase[],
  rate: number,
  noBudget = false,
): Promise<ScenarioRun[]> {
  const grpcServers = await startServers(1, false);
  const grpcRun = await runLanes(
    grpcServers,
    grpcLanes(grpcServers.grpcAddresses[0] as string, noBudget),
    phases(grpcServers),
    rate,
  );
  const trpcServers = await startServers(0, true);
  const trpcRun = await runLanes(
    trpcServers,
    trpcLanes(trpcServers.trpcUrl as string, noBudget),
    phases(trpcServers),
    rate,
  );
  return [grpcRun, trpcRun];
}

/** Lane names of a split run, in table order. */
export function laneNames(runs: readonly ScenarioRun[]): string[] {
  return runs.flatMap((r) => r.report.clients.map((c) => c.client));
}

type Runs = ScenarioRun | readonly ScenarioRun[];

function runOf(runs: Runs, client: string): ScenarioRun {
  const list: readonly ScenarioRun[] = Array.isArray(runs) ? runs : [runs as ScenarioRun];
  return (
    list.find((r) => r.report.clients.some((c) => c.client === client)) ?? (list[0] as ScenarioRun)
  );
}

/** When phase `phase` of the run holding `client` started (epoch ms), or undefined. */
export function phaseStartAt(runs: Runs, client: string, phase: string): number | undefined {
  const run = runOf(runs, client);
  const p = run.report.phases.find((x) => x.name === phase);
  return p ? run.report.startedAt + p.startMs : undefined;
}

/** Calls of `client` started inside phase `phase` of `run`. */
export function callsIn(runs: Runs, client: string, phase: string): CallRecord[] {
  const run = runOf(runs, client);
  const p = run.report.phases.find((x) => x.name === phase);
  if (!p) return [];
  const start = run.report.startedAt + p.startMs;
  const end = run.report.startedAt + p.endMs;
  return run.calls.filter((c) => c.client === client && c.startedAt >= start && c.startedAt < end);
}

/** One client's figures for one phase. */
export interface PhaseFigures {
  offered: number;
  successRate: number | undefined;
  attemptsPerCall: number | undefined;
  p50: number | undefined;
  p99: number | undefined;
  p999: number | undefined;
  /** Latency of the failed calls, ms. */
  failedP50: number | undefined;
  failedP99: number | undefined;
  failed: number;
}

/** Figures of `client` in `phase`, from the run's report and raw calls. */
export function phaseFigures(runs: Runs, client: string, phase: string): PhaseFigures {
  const run = runOf(runs, client);
  const report = run.report.clients.find((c) => c.client === client);
  const stats = report?.phases.find((p) => p.phase === phase);
  const calls = callsIn(runs, client, phase);
  const all = summarizeLatency(calls.map((c) => c.latencyMs));
  const failed = calls.filter((c) => !c.ok);
  const failedLat = summarizeLatency(failed.map((c) => c.latencyMs));
  return {
    offered: calls.length,
    successRate: stats?.successRate,
    attemptsPerCall: stats?.attemptsPerCall,
    p50: all.p50,
    p99: all.p99,
    p999: all.p999,
    failedP50: failedLat.p50,
    failedP99: failedLat.p99,
    failed: failed.length,
  };
}

/** Formats ms with adaptive precision (µs below 1 ms). */
export function ms(value: number | undefined): string {
  if (value === undefined) return '–';
  return value < 1 ? `${fmt(value * 1000, 0)} µs` : `${fmt(value, value < 10 ? 2 : 1)} ms`;
}

export { pct };

/** The first phase of every fault run: healthy, so connections are up and code is warm before the fault. */
export const WARM_UP = { name: 'warm-up', kind: 'healthy' as const, durationMs: 2000 };

/** One call per lane before the run, so connection set-up is not billed to the first phase. */
export async function connect(lanes: readonly Lane[]): Promise<void> {
  await Promise.all(
    lanes.map((l) => l.call({ callId: `connect-${l.name}`, index: -1 }).catch(() => undefined)),
  );
}

/**
 * Runs `phases` (after the warm-up) with every lane at `rate` calls/s, then
 * closes the lanes and the servers whatever happened; `onAttempts` hears what
 * the servers counted at the end.
 */
export async function runLanes(
  servers: Servers,
  lanes: readonly Lane[],
  phases: readonly ScenarioPhase[],
  rate: number,
  onAttempts?: (attempts: AttemptRecord[]) => void,
): Promise<ScenarioRun> {
  try {
    await connect(lanes);
    return await runScenario({
      phases: [WARM_UP, ...phases],
      clients: lanes,
      rate,
      attempts: async () => {
        const attempts = await allAttempts(servers.all);
        onAttempts?.(attempts);
        return attempts;
      },
    });
  } finally {
    for (const l of lanes) l.close();
    await servers.close();
  }
}
