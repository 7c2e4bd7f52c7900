import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ServingStatus } from 'grpc-health-check';
import type { CapacitySpec, CapacityStats } from './capacity.js';
import type { GrpcFaultRule } from './faults.js';
import type { ObservedAttempt } from './recorder.js';

declare const __filename: string | undefined;

/** Options of {@link spawnGrpcChaosServer}: the server's options, JSON-safe. */
export interface SpawnGrpcChaosServerOptions {
  /** Port to listen on; 0 picks a free one (kept across restarts). Defaults to 0. */
  port?: number;
  /** Replica id. Defaults to `"replica-1"`. */
  replica?: string;
  /** Initial fault schedule. Defaults to none. */
  faults?: readonly GrpcFaultRule[];
  /** Seed of the fault schedule. Defaults to 1. */
  seed?: number;
  /** Most attempts the child keeps in its observations (counts continue beyond it). Defaults to 100 000. */
  maxObservations?: number;
  /** A fixed capacity in front of every method (see `GrpcChaosServerOptions.capacity`). Defaults to none. */
  capacity?: CapacitySpec;
  /** Milliseconds to wait for the child to report its port (a loaded 2-core CI host can take over 10 s to start one). Defaults to 30 000. */
  startTimeoutMs?: number;
}

/** A chaos gRPC server in its own process: it can be killed like a crashed replica. */
export interface ChildGrpcChaosServer {
  /** The bound port (the same after `restart()`). */
  readonly port: number;
  /** `127.0.0.1:port`. */
  readonly address: string;
  /** Process id of the current child, or undefined while it is dead. */
  readonly pid: number | undefined;
  /**
   * Replaces the fault schedule in the child and, when `health` is given, sets
   * the overall health in the same step (faults first). Defaults to leaving
   * health as it is.
   */
  setFaults(rules: readonly GrpcFaultRule[], health?: ServingStatus): Promise<void>;
  /** Sets the child's capacity (`undefined`: unlimited), e.g. halving it mid-run. */
  setCapacity(spec: CapacitySpec | undefined): Promise<void>;
  /** What the child's capacity did since it started or `reset()`. */
  capacityStats(): Promise<CapacityStats>;
  /** Forgets the child's observations and capacity counts. */
  reset(): Promise<void>;
  /** Sets the health status in the child (default: overall and the Echo service). */
  setHealth(status: ServingStatus, service?: string): Promise<void>;
  /** What the child has seen since it (re)started. */
  stats(): Promise<{
    /** Attempts the child has seen. */
    total: number;
    /** The attempts it recorded, in arrival order. */
    observed: ObservedAttempt[];
  }>;
  /** Kills the child (`SIGKILL` by default) and waits for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts a new child on the same port (after `kill`). */
  restart(): Promise<void>;
  /** Kills the child for good. */
  close(): Promise<void>;
  /** Same as `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Where this module lives: CJS has `__filename`; ESM (and vitest) show it in a stack frame. */
function thisFile(): string {
  if (typeof __filename === 'string') return __filename;
  const frame = /\(?((?:file:\/\/)?\/[^\s()]+?):\d+:\d+\)?/.exec(new Error().stack ?? '');
  if (!frame?.[1]) throw new Error('spawnGrpcChaosServer: cannot locate its own module file');
  return frame[1].startsWith('file:') ? fileURLToPath(frame[1]) : frame[1];
}

function childCommand(): string[] {
  const self = thisFile();
  const ts = self.endsWith('.ts');
  const entry = join(dirname(self), ts ? 'child-entry.ts' : 'child-entry.js');
  if (!ts) return [entry];
  // Sources run through tsx, resolved from this package so no global install is needed.
  const loader = createRequire(self).resolve('tsx');
  return ['--import', pathToFileURL(loader).href, entry];
}

/**
 * Starts a chaos gRPC server as a child process and waits until it listens.
 * Kill it to simulate a crashed replica; `restart()` brings it back on the same port.
 */
export async function spawnGrpcChaosServer(
  options: SpawnGrpcChaosServerOptions = {},
): Promise<ChildGrpcChaosServer> {
  const { startTimeoutMs = 30_000, ...serverOptions } = options;
  let port = serverOptions.port ?? 0;
  let child: ChildProcess | undefined;
  let nextId = 1;
  const pending = new Map<number, (reply: Record<string, unknown>) => void>();

  async function start(): Promise<void> {
    const proc = spawn(
      process.execPath,
      [...childCommand(), JSON.stringify({ ...serverOptions, port })],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    child = proc;
    const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
    await new Promise<void>((resolve, reject) => {
      const timer = AbortSignal.timeout(startTimeoutMs);
      const onTimeout = () =>
        reject(new Error(`chaos child did not listen within ${startTimeoutMs} ms`));
      timer.addEventListener('abort', onTimeout, { once: true });
      proc.once('exit', (code) =>
        reject(new Error(`chaos child exited with ${String(code)} before listening`)),
      );
      lines.on('line', (line) => {
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(line);
        } catch {
          return;
        }
        if (message.event === 'listening') {
          port = message.port as number;
          timer.removeEventListener('abort', onTimeout);
          resolve();
          return;
        }
        const waiter = pending.get(message.id as number);
        pending.delete(message.id as number);
        waiter?.(message);
      });
    });
  }

  function command(
    cmd: string,
    extra: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    const proc = child;
    if (!proc?.stdin) return Promise.reject(new Error('chaos child is not running'));
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, (reply) =>
        reply.ok ? resolve(reply) : reject(new Error(String(reply.error))),
      );
      proc.stdin?.write(`${JSON.stringify({ id, cmd, ...extra })}\n`);
    });
  }

  async function kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill(signal);
    await exited;
  }

  await start();
  return {
    get port() {
      return port;
    },
    get address() {
      return `127.0.0.1:${port}`;
    },
    get pid() {
      return child?.pid;
    },
    setFaults: async (faults, health) => {
      await command('faults', health === undefined ? { faults } : { faults, health });
    },
    setCapacity: async (capacity) => {
      // JSON has no undefined: null turns the capacity off.
      await command('capacity', { capacity: capacity ?? null });
    },
    capacityStats: async () => (await command('capacity-stats')).stats as CapacityStats,
    reset: async () => {
      await command('reset');
    },
    setHealth: async (status, service) => {
      await command('health', service === undefined ? { status } : { status, service });
    },
    stats: async () => {
      const reply = await command('stats');
      return { total: reply.total as number, observed: reply.observed as ObservedAttempt[] };
    },
    kill,
    restart: async () => {
      if (child) return;
      await start();
    },
    close: () => kill(),
    [Symbol.asyncDispose]: () => kill(),
  };
}
