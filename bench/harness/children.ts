import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** A healthy chaos tRPC server in a child process. */
export interface TrpcChild {
  url: string;
  close(): Promise<void>;
}

/** Starts `trpc-server-child.ts` through tsx and waits for its port. */
export async function spawnTrpcServer(): Promise<TrpcChild> {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', tsx, join(here, 'trpc-server-child.ts')],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`tRPC child exited with ${String(code)}`)));
    lines.once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.stdin?.end();
      setTimeout(() => child.kill('SIGKILL'), 2000).unref();
      await exited;
    },
  };
}
