import {
  type ChaosTrpcServer,
  type ChildGrpcChaosServer,
  createChaosTrpcServer,
  grpcChildTarget,
  spawnGrpcChaosServer,
  trpcServerTarget,
} from '@breakwater/chaos';
import type { DemoTargets } from './scenarios.js';

/** The demo's servers: three gRPC replicas in child processes, two tRPC servers in process. */
export interface DemoServers {
  targets: DemoTargets;
  /** `127.0.0.1:port` of each gRPC replica, by replica id. */
  grpc: Array<{ id: string; address: string }>;
  /** Base URL of each tRPC server, by id. */
  trpc: Array<{ id: string; url: string }>;
  /** Every attempt every server saw. */
  attempts(): Promise<Array<{ callId: string; replica: string; count?: number }>>;
  close(): Promise<void>;
}

/** Starts the servers; the gRPC replicas are real processes so a kill is a real crash. */
export async function startDemoServers(): Promise<DemoServers> {
  const ids = ['grpc-a', 'grpc-b', 'grpc-c'];
  const children: ChildGrpcChaosServer[] = [];
  const trpcServers: ChaosTrpcServer[] = [];
  try {
    children.push(
      ...(await Promise.all(
        ids.map((replica, i) => spawnGrpcChaosServer({ replica, seed: i + 1 })),
      )),
    );
    trpcServers.push(
      ...(await Promise.all(
        ['trpc-a', 'trpc-b'].map((name, i) => createChaosTrpcServer({ name, seed: i + 11 })),
      )),
    );
  } catch (error) {
    await Promise.all([...children, ...trpcServers].map((s) => s.close()));
    throw error;
  }
  const [ga, gb, gc] = children.map((c, i) => grpcChildTarget(c, ids[i] as string));
  const [ta, tb] = trpcServers.map((s) => trpcServerTarget(s));
  const targets = {
    grpc: { a: ga, b: gb, c: gc },
    trpc: { a: ta, b: tb },
  } as DemoTargets;
  const all = [ga, gb, gc, ta, tb].filter((x) => x !== undefined);
  return {
    targets,
    grpc: children.map((c, i) => ({ id: ids[i] as string, address: c.address })),
    trpc: trpcServers.map((s) => ({ id: s.name, url: s.url })),
    async attempts() {
      return (await Promise.all(all.map((x) => x.attempts()))).flat();
    },
    async close() {
      await Promise.all([...children, ...trpcServers].map((s) => s.close()));
    },
  };
}
