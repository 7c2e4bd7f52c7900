import {
  type ChildGrpcChaosServer,
  grpcChildTarget,
  spawnGrpcChaosServer,
} from '@breakwater/chaos';
import type { DemoTargets } from './scenarios.js';
import { forkTrpcServer, type TrpcChild } from './trpc-child.js';

/** The demo's servers: three gRPC replicas and two tRPC servers, each in its own process. */
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

/** Starts the servers; every one is a real process, so a kill is a real crash. */
export async function startDemoServers(): Promise<DemoServers> {
  const ids = ['grpc-a', 'grpc-b', 'grpc-c'];
  const children: ChildGrpcChaosServer[] = [];
  const trpcServers: TrpcChild[] = [];
  try {
    children.push(
      ...(await Promise.all(
        // A busy machine can take a while to start a TypeScript child.
        ids.map((replica, i) =>
          spawnGrpcChaosServer({ replica, seed: i + 1, startTimeoutMs: 30_000 }),
        ),
      )),
    );
    trpcServers.push(
      ...(await Promise.all(
        ['trpc-a', 'trpc-b'].map((name, i) => forkTrpcServer({ name, seed: i + 11 })),
      )),
    );
  } catch (error) {
    await Promise.all([...children, ...trpcServers].map((s) => s.close()));
    throw error;
  }
  const [ga, gb, gc] = children.map((c, i) => grpcChildTarget(c, ids[i] as string));
  const [ta, tb] = trpcServers;
  const targets = {
    grpc: { a: ga, b: gb, c: gc },
    trpc: { a: ta, b: tb },
  } as DemoTargets;
  const all = [ga, gb, gc, ta, tb].filter((x) => x !== undefined);
  return {
    targets,
    grpc: children.map((c, i) => ({ id: ids[i] as string, address: c.address })),
    trpc: trpcServers.map((s) => ({ id: s.id, url: s.url })),
    async attempts() {
      return (await Promise.all(all.map((x) => x.attempts()))).flat();
    },
    async close() {
      await Promise.all([...children, ...trpcServers].map((s) => s.close()));
    },
  };
}
