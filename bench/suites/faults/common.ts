/**
 * Shared pieces of the fault benchmarks: chaos servers as scenario targets,
 * the standard set of lanes, and per-phase numbers from a scenario run.
 */
import {
  type CallRecord,
  type ChaosFault,
  type ChaosTarget,
  createChaosTrpcServer,
  grpcChildTarget,
  runScenario,
  type ScenarioPhase,
  type ScenarioRun,
  spawnGrpcChaosServer,
  trpcServerTarget,
} from '@breakwater/chaos';
import { fmt, pct } from '../../harness/report.js';
import { latencySummary } from '../../harness/stats.js';
import {
  breakwaterGrpcLane,
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

/** Starts `replicas` gRPC chaos servers as child processes (ids r0, r1, …) and optionally one tRPC server in-process. */
export async function startServers(replicas: number, withTrpc: boolean): Promise<Servers> {
  const children = await Promise.all(
    Array.from({ length: replicas }, (_, i) =>
      spawnGrpcChaosServer({ replica: `r${i}`, seed: i + 1, startTimeoutMs: 30_000 }),
    ),
  );
  const grpc = children.map((c, i) => grpcChildTarget(c, `r${i}`));
  const trpcServer = withTrpc ? await createChaosTrpcServer({ name: 'trpc', seed: 7 }) : undefined;
  const trpc = trpcServer ? trpcServerTarget(trpcServer, 'trpc') : undefined;
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

/**
 * The single-replica lanes every retry comparison runs: no resilience and each
 * peer on gRPC against `grpcAddress`, the same on tRPC against `trpcUrl`.
 */
export function standardLanes(grpcAddress: string, trpcUrl: string | undefined): Lane[] {
  const lanes: Lane[] = [
    grpcLane('grpc-js, no resilience', grpcAddress),
    grpcLane('grpc-js retryPolicy', grpcAddress, grpcServiceConfig({ retry: true })),
    grpcLane(
      'grpc-js retryPolicy + retryThrottling',
      grpcAddress,
      grpcServiceConfig({ retry: true, throttle: true }),
    ),
    niceRetryLane('nice-grpc + retry middleware', grpcAddress),
    cockatielGrpcLane('cockatiel wrap(retry, breaker) + grpc-js', grpcAddress),
    breakwaterGrpcLane('Breakwater grpc-js', grpcAddress),
    breakwaterNiceLane('Breakwater nice-grpc', grpcAddress),
  ];
  if (trpcUrl) {
    const terminal = () => trpcTerminal(trpcUrl, 1);
    lanes.push(
      trpcLane('tRPC, no resilience', [terminal()]),
      trpcLane('tRPC retryLink', trpcRetryLinks(terminal())),
      trpcLane('Breakwater tRPC', breakwaterTrpcLinks(terminal())),
    );
  }
  return lanes;
}

/** Calls of `client` started inside phase `phase` of `run`. */
export function callsIn(run: ScenarioRun, client: string, phase: string): CallRecord[] {
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
export function phaseFigures(run: ScenarioRun, client: string, phase: string): PhaseFigures {
  const report = run.report.clients.find((c) => c.client === client);
  const stats = report?.phases.find((p) => p.phase === phase);
  const calls = callsIn(run, client, phase);
  const all = latencySummary(calls.map((c) => c.latencyMs));
  const failed = calls.filter((c) => !c.ok);
  const failedLat = latencySummary(failed.map((c) => c.latencyMs));
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
 * closes the lanes and the servers whatever happened.
 */
export async function runLanes(
  servers: Servers,
  lanes: readonly Lane[],
  phases: readonly ScenarioPhase[],
  rate: number,
): Promise<ScenarioRun> {
  try {
    await connect(lanes);
    return await runScenario({
      phases: [WARM_UP, ...phases],
      clients: lanes,
      rate,
      attempts: () => allAttempts(servers.all),
    });
  } finally {
    for (const l of lanes) l.close();
    await servers.close();
  }
}
