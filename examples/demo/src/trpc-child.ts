import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type AttemptRecord, type ChaosTarget, trpcPlanFor } from '@breakwater/chaos';

/** A chaos tRPC server in a child process, usable as a scenario target. */
export interface TrpcChild extends ChaosTarget {
  readonly url: string;
  close(): Promise<void>;
}

const ENTRY = fileURLToPath(new URL('./trpc-child-entry.ts', import.meta.url));
const TSCONFIG = fileURLToPath(new URL('../../../tsconfig.json', import.meta.url));
// The child runs TypeScript through tsx (resolved from this package, so it works
// under vitest too) and resolves workspace packages through the root tsconfig paths.
const LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** Forks a chaos tRPC server and waits until it listens; a kill is a `SIGKILL`, a restart a new process on the same port. */
export async function forkTrpcServer(options: { name: string; seed: number }): Promise<TrpcChild> {
  let port = 0;
  let child: ChildProcess | undefined;
  let nextId = 1;
  let fault: Parameters<ChaosTarget['setFault']>[0];
  const archived: AttemptRecord[] = [];
  const pending = new Map<number, (reply: Record<string, unknown>) => void>();

  async function start(): Promise<void> {
    const proc = fork(ENTRY, [JSON.stringify({ ...options, port })], {
      stdio: 'inherit',
      execArgv: ['--import', LOADER],
      env: { ...process.env, TSX_TSCONFIG_PATH: TSCONFIG },
    });
    child = proc;
    proc.on('message', (m: Record<string, unknown>) => {
      const waiter = pending.get(m.id as number);
      pending.delete(m.id as number);
      waiter?.(m);
    });
    await new Promise<void>((resolve, reject) => {
      proc.once('exit', (code) =>
        reject(new Error(`tRPC child exited with ${code} before listening`)),
      );
      const onMessage = (m: Record<string, unknown>) => {
        if (m.event !== 'listening') return;
        port = m.port as number;
        proc.off('message', onMessage);
        resolve();
      };
      proc.on('message', onMessage);
    });
  }

  function command(message: Record<string, unknown>): Promise<Record<string, unknown>> {
    const proc = child;
    if (!proc?.connected) return Promise.reject(new Error('tRPC child is not running'));
    const id = nextId++;
    return new Promise((resolve) => {
      pending.set(id, resolve);
      proc.send({ id, ...message });
    });
  }

  async function current(): Promise<AttemptRecord[]> {
    // A child that died (e.g. a restart that never got to listen) has nothing left to count.
    if (!child?.connected) return [];
    const reply = await command({ cmd: 'stats' });
    return Object.entries(reply.attempts as Record<string, number>).map(([callId, count]) => ({
      callId,
      replica: options.name,
      count,
    }));
  }

  async function kill(): Promise<void> {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGKILL');
    await exited;
  }

  await start();
  return {
    id: options.name,
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    async setFault(next) {
      fault = next;
      if (child) await command({ cmd: 'faults', faults: trpcPlanFor(next) });
    },
    async kill() {
      archived.push(...(await current()));
      await kill();
    },
    async restart() {
      if (child) return;
      await start();
      await command({ cmd: 'faults', faults: trpcPlanFor(fault) });
    },
    async attempts() {
      return [...archived, ...(await current())];
    },
    close: kill,
  };
}
