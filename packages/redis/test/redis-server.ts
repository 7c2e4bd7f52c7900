// Starts a real redis-server for the tests: a free loopback port, a temporary
// directory, no persistence. CI installs the Debian package (.ci/run).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';

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

function launch(port: number, dir: string, extra: readonly string[] = []): Promise<ChildProcess> {
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
      ...extra,
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

/**
 * Starts redis-server on a free loopback port in a fresh temporary directory,
 * with `extra` arguments (e.g. `['--requirepass', 'secret']`) on every start.
 */
export async function startRedisServer(extra: readonly string[] = []): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'breakwater-redis-'));
  const port = await freePort();
  let proc: ChildProcess | undefined = await launch(port, dir, extra);
  return {
    port,
    async kill() {
      await kill(proc);
      proc = undefined;
    },
    async restart() {
      await kill(proc);
      proc = await launch(port, dir, extra);
    },
    async stop() {
      await kill(proc);
      proc = undefined;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A running Redis Cluster of masters only (no replicas). */
export interface RedisCluster {
  /** The masters' ports, one per node. */
  readonly ports: readonly number[];
  /** Kills every node and removes their directory. */
  stop(): Promise<void>;
}

const run = promisify(execFile);

/**
 * A port whose cluster bus port (port + 10000) is free too. The bus ports of
 * the other nodes are checked as well: a node listens on both.
 */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 10_000 > 65_535 || taken.has(port) || taken.has(port + 10_000)) continue;
    const bus = createServer();
    const free = await new Promise<boolean>((resolve) => {
      bus.once('error', () => resolve(false));
      bus.listen(port + 10_000, '127.0.0.1', () => resolve(true));
    });
    if (free) await new Promise<void>((resolve) => bus.close(() => resolve()));
    if (free) {
      taken.add(port);
      taken.add(port + 10_000);
      return port;
    }
  }
}

/**
 * Starts `nodes` redis-server processes with `--cluster-enabled yes` on free
 * loopback ports in a fresh temporary directory, joins them with
 * `redis-cli --cluster create` (Debian's redis-tools) and waits until every
 * slot is served.
 */
export async function startRedisCluster(nodes = 3): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'breakwater-redis-cluster-'));
  const taken = new Set<number>();
  const ports: number[] = [];
  for (let i = 0; i < nodes; i++) ports.push(await freeClusterPort(taken));
  const procs: ChildProcess[] = [];
  const stop = async () => {
    for (const p of procs) await kill(p);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) {
      procs.push(
        await launch(port, dir, [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
        ]),
      );
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    // Every node must agree that all slots are served before clients connect.
    for (const port of ports) {
      for (let i = 0; ; i++) {
        const { stdout } = await run('redis-cli', ['-p', String(port), 'cluster', 'info']);
        if (stdout.includes('cluster_state:ok')) break;
        if (i === 200) throw new Error(`cluster node ${port} never reached cluster_state:ok`);
        await new Promise((resolve) => setImmediate(resolve));
        await run('redis-cli', ['-p', String(port), 'ping']);
      }
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { ports, stop };
}

/** An ioredis client of the test's own on `port`, ready (no offline queue: a dead server fails at once). */
export async function connectClient(port: number): Promise<Redis> {
  const client = new Redis({ port, host: '127.0.0.1', enableOfflineQueue: false });
  await new Promise((ready) => client.once('ready', ready));
  return client;
}
