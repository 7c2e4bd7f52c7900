import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  type AttemptRecord,
  type ChaosFault,
  type ChaosTarget,
  trpcPlanFor,
} from '@breakwater/chaos';

const here = dirname(fileURLToPath(import.meta.url));

/** A chaos tRPC server in a child process, controlled over its stdin. */
export interface TrpcChild {
  url: string;
  /** The server's process id. */
  pid: number | undefined;
  /** Sends one command (`setFaults`, `attempts`, `stop`, `start`) and resolves with its result. */
  command(op: string, args?: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}

/** Options of {@link spawnTrpcServer}. */
export interface TrpcChildOptions {
  /** Seed of the server's fault randomness. Defaults to 7. */
  seed?: number;
  /** Server name (in answers). Defaults to `'bench-trpc'`. */
  name?: string;
}

/**
 * A child process speaking line-delimited JSON: it prints one line when ready,
 * then answers `{"id":N,"op":…}` commands on stdin with `{"id":N,"result":…}`
 * (or `"error"`) lines, and exits when its stdin closes.
 */
export interface CommandChild<Ready> {
  /** What the child printed when ready. */
  ready: Ready;
  /** Its process id. */
  pid: number | undefined;
  /** Sends one command and resolves with its result. */
  command(op: string, args?: Record<string, unknown>): Promise<unknown>;
  /** Closes its stdin and waits for it to exit (killed after 2 s). */
  close(): Promise<void>;
}

/** Node's arguments to run the TypeScript file `path` through tsx, with `nodeArgs` before it. */
function tsxArgs(
  path: string,
  args: readonly string[],
  nodeArgs: readonly string[] = [],
): string[] {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return [...nodeArgs, '--import', tsx, path, ...args];
}

/**
 * Starts the TypeScript `script` (relative to this folder) through tsx, with
 * `nodeArgs` before it, and waits for its ready line.
 */
export async function spawnCommandChild<Ready>(
  script: string,
  args: readonly string[],
  nodeArgs: readonly string[] = [],
): Promise<CommandChild<Ready>> {
  const child: ChildProcess = spawn(process.execPath, tsxArgs(join(here, script), args, nodeArgs), {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextId = 1;
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited with ${String(code)}`)));
    lines.once('line', (line) => resolve(JSON.parse(line) as Ready));
  });
  lines.on('line', (line) => {
    const reply = JSON.parse(line) as { id: number; result?: unknown; error?: string };
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.error !== undefined) waiter?.reject(new Error(reply.error));
    else waiter?.resolve(reply.result);
  });
  child.on('exit', (code) => {
    for (const waiter of pending.values()) {
      waiter.reject(new Error(`${script} exited with ${String(code)}`));
    }
    pending.clear();
  });
  return {
    ready,
    pid: child.pid,
    command: (op, args = {}) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject });
        child.stdin?.write(`${JSON.stringify({ id, op, ...args })}\n`);
      }),
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.stdin?.end();
      setTimeout(() => child.kill('SIGKILL'), 2000).unref();
      await exited;
    },
  };
}

/** Starts `trpc-server-child.ts` through tsx and waits for its port. */
export async function spawnTrpcServer(options: TrpcChildOptions = {}): Promise<TrpcChild> {
  const child = await spawnCommandChild<{ port: number }>('trpc-server-child.ts', [
    String(options.seed ?? 7),
    options.name ?? 'bench-trpc',
  ]);
  return {
    url: `http://127.0.0.1:${child.ready.port}`,
    pid: child.pid,
    command: child.command,
    close: child.close,
  };
}

/** A scenario target over a child tRPC chaos server (kill = stop listening, as in-process). */
export function trpcChildTarget(server: TrpcChild, id: string): ChaosTarget {
  return {
    id,
    async setFault(fault) {
      await server.command('setFaults', { plan: trpcPlanFor(fault) });
    },
    kill: async () => {
      await server.command('stop');
    },
    restart: async () => {
      await server.command('start');
    },
    async attempts(): Promise<AttemptRecord[]> {
      const counts = (await server.command('attempts')) as Record<string, number>;
      return Object.entries(counts).map(([callId, count]) => ({ callId, replica: id, count }));
    },
  };
}

/** The servers of `recovery-servers-child.ts`: one gRPC and one tRPC chaos server, counting per client. */
export interface RecoveryServers {
  /** `127.0.0.1:port` of the gRPC server. */
  grpcAddress: string;
  /** Base URL of the tRPC server. */
  trpcUrl: string;
  /** Sets `fault` on both servers (`undefined` = healthy); resolves with when the child applied it (epoch ms). */
  setFault(fault: ChaosFault | undefined): Promise<number>;
  /** Both servers stop listening (connections refused) until `start()`; resolves with when (epoch ms). */
  stop(): Promise<number>;
  /** Both servers listen again on the same ports; resolves with when (epoch ms). */
  start(): Promise<number>;
  /** Attempts per call id, both servers together. */
  counts(): Promise<Map<string, number>>;
  /** Arrival times (epoch ms) of every attempt per client (the call id up to its last `-`); empty unless spawned with `arrivals`. */
  arrivals(): Promise<Record<string, number[]>>;
  /** The child's event-loop stalls of 50 ms or more so far: when each ended (epoch ms) and how long it was. */
  stalls(): Promise<{ at: number; ms: number }[]>;
  close(): Promise<void>;
}

/** Starts `recovery-servers-child.ts` (`arrivals`: keep every attempt's arrival time). */
export async function spawnRecoveryServers(arrivals: boolean): Promise<RecoveryServers> {
  const child = await spawnCommandChild<{ grpcPort: number; trpcPort: number }>(
    'recovery-servers-child.ts',
    [arrivals ? '1' : '0'],
  );
  return {
    grpcAddress: `127.0.0.1:${child.ready.grpcPort}`,
    trpcUrl: `http://127.0.0.1:${child.ready.trpcPort}`,
    setFault: async (fault) =>
      (await child.command('setFault', fault === undefined ? {} : { fault })) as number,
    stop: async () => (await child.command('stop')) as number,
    start: async () => (await child.command('start')) as number,
    counts: async () =>
      new Map(Object.entries((await child.command('counts')) as Record<string, number>)),
    arrivals: async () => (await child.command('arrivals')) as Record<string, number[]>,
    stalls: async () => (await child.command('stalls')) as { at: number; ms: number }[],
    close: child.close,
  };
}
