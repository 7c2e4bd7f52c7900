// Starts a real redis-server for the tests: a free loopback port, a temporary
// directory, no persistence. CI installs the Debian package (.ci/run).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** A running redis-server that can be killed and brought back on the same port. */
export interface RedisServer {
  readonly port: number;
  /** Kills the server (SIGKILL: no goodbye to clients, as a crash). */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>;
  /** Kills it and removes its directory. */
  stop(): Promise<void>;
}

/** A port nobody listens on now: bind 0, read the port, close. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

function launch(port: number, dir: string): Promise<ChildProcess> {
  const proc = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    proc.once('error', (e) =>
      reject(
        new Error(`cannot start redis-server (apt-get install -y redis-server): ${e.message}`),
      ),
    );
    proc.once('exit', (code) => reject(new Error(`redis-server exited with ${String(code)}`)));
    const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      if (line.includes('Ready to accept connections')) {
        proc.removeAllListeners('exit');
        lines.removeAllListeners('line');
        // Keep draining its log so the pipe never fills.
        lines.on('line', () => {});
        resolve(proc);
      }
    });
  });
}

async function kill(proc: ChildProcess | undefined): Promise<void> {
  if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill('SIGKILL');
  await exited;
}

/** Starts redis-server on a free loopback port in a fresh temporary directory. */
export async function startRedisServer(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'breakwater-redis-'));
  const port = await freePort();
  let proc: ChildProcess | undefined = await launch(port, dir);
  return {
    port,
    async kill() {
      await kill(proc);
      proc = undefined;
    },
    async restart() {
      await kill(proc);
      proc = await launch(port, dir);
    },
    async stop() {
      await kill(proc);
      proc = undefined;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
