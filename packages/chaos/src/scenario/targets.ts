import { status as Status } from '@grpc/grpc-js';
import type { CapacitySpec } from '../grpc/capacity.js';
import type { ChildGrpcChaosServer } from '../grpc/child.js';
import type { GrpcFaultRule, LatencySpec } from '../grpc/faults.js';
import type { TrpcFaultPlan } from '../trpc/faults.js';
import type { ChaosTrpcServer } from '../trpc/server.js';
import type { AttemptRecord } from './analyze.js';

/** A fault described once for any kind of chaos server. */
export interface ChaosFault {
  /** Share of attempts that fail (`UNAVAILABLE` for gRPC, HTTP 503 for tRPC), in [0, 1]. Defaults to 0. */
  errorRate?: number;
  /** Latency added to attempts ("5% of calls +300 ms" is `{ kind: 'tail', percent: 5, extraMs: 300 }`). Defaults to none. */
  latency?: LatencySpec;
  /** Share of attempts never answered, in [0, 1]. Defaults to 0. */
  hangRate?: number;
  /**
   * The server's health service reports `NOT_SERVING` while this fault holds,
   * and `SERVING` again once the fault is cleared (gRPC: `grpc.health.v1`,
   * pushed to `Watch` streams; tRPC: the chaos server's `/healthz`, pushed to
   * its event-stream watchers). Defaults to false: health stays `SERVING`.
   */
  notServing?: boolean;
  /**
   * The server saturates: a fixed capacity in front of it (gRPC chaos servers
   * only, see `GrpcChaosServerOptions.capacity`; a tRPC target refuses it).
   * Defaults to none (unlimited).
   */
  capacity?: CapacitySpec;
}

/** A chaos server a scenario phase can act on, whatever its protocol. */
export interface ChaosTarget {
  /** Replica id, as it appears in attempt records and reports. */
  readonly id: string;
  /** Replaces the server's faults (`undefined` = healthy). */
  setFault(fault: ChaosFault | undefined): Promise<void>;
  /** Takes the server down: connections are refused until `restart()`. */
  kill(): Promise<void>;
  /** Brings it back on the same port. */
  restart(): Promise<void>;
  /** Every attempt the server saw, across kills and restarts. */
  attempts(): Promise<AttemptRecord[]>;
}

/** The gRPC fault rules for `fault` (on the `Unary` echo only, so health checks stay truthful). */
export function grpcRulesFor(fault: ChaosFault | undefined): GrpcFaultRule[] {
  if (!fault) return [];
  const rules: GrpcFaultRule[] = [];
  if (fault.latency) rules.push({ latency: fault.latency });
  if (fault.hangRate) rules.push({ rate: fault.hangRate, hang: true });
  if (fault.errorRate) rules.push({ rate: fault.errorRate, status: Status.UNAVAILABLE });
  return rules;
}

/** The tRPC fault plan for `fault`. */
export function trpcPlanFor(fault: ChaosFault | undefined): TrpcFaultPlan {
  if (!fault) return {};
  if (fault.capacity !== undefined) {
    throw new TypeError('fault.capacity is for gRPC chaos servers only; tRPC ones have none');
  }
  return {
    ...(fault.errorRate ? { errorRate: fault.errorRate, error: { type: 'status' } } : {}),
    ...(fault.hangRate ? { hangRate: fault.hangRate } : {}),
    ...(fault.latency ? { latency: fault.latency } : {}),
    ...(fault.notServing ? { notServing: true } : {}),
  };
}

/**
 * Wraps a chaos gRPC server running as a child process. A kill is a real
 * `SIGKILL`; what the child saw is fetched first, so attempt counts survive it.
 */
export function grpcChildTarget(server: ChildGrpcChaosServer, id: string): ChaosTarget {
  const archived: AttemptRecord[] = [];
  const current = async (): Promise<AttemptRecord[]> => {
    if (server.pid === undefined) return [];
    const { observed } = await server.stats();
    const out: AttemptRecord[] = [];
    for (const o of observed)
      if (o.callId !== undefined) out.push({ callId: o.callId, replica: id });
    return out;
  };
  let fault: ChaosFault | undefined;
  // What the child's health service reports: a new process starts SERVING.
  let serving = true;
  // The capacity the child has: a new process starts with none.
  let capacity: CapacitySpec | undefined;
  /**
   * Faults and health in one step (faults first), as a real server's health
   * follows its state: it says SERVING again the moment it answers.
   */
  const apply = async () => {
    const want = fault?.notServing !== true;
    // Only a change is sent: every setStatus pushes to the Watch streams, changed or not.
    const health = want === serving ? undefined : want ? 'SERVING' : 'NOT_SERVING';
    await server.setFaults(grpcRulesFor(fault), health);
    serving = want;
    if (fault?.capacity !== capacity) await server.setCapacity(fault?.capacity);
    capacity = fault?.capacity;
  };
  return {
    id,
    async setFault(next) {
      fault = next;
      if (server.pid !== undefined) await apply();
    },
    async kill() {
      archived.push(...(await current()));
      await server.kill();
    },
    async restart() {
      await server.restart();
      // A new process starts with the options it was spawned with (and SERVING): re-apply the current fault.
      serving = true;
      capacity = undefined;
      await apply();
    },
    async attempts() {
      return [...archived, ...(await current())];
    },
  };
}

/** Wraps an in-process chaos tRPC server: a kill closes its listener and every connection. */
export function trpcServerTarget(server: ChaosTrpcServer, id: string = server.name): ChaosTarget {
  return {
    id,
    async setFault(fault) {
      server.setFaults(trpcPlanFor(fault));
    },
    kill: () => server.stop(),
    restart: () => server.start(),
    async attempts() {
      return Object.entries(server.stats().attempts).map(([callId, count]) => ({
        callId,
        replica: id,
        count,
      }));
    },
  };
}
