// Runs one of examples/demo's TypeScript entry points through tsx (no build step),
// passing this process's arguments on. Workspace packages resolve to their sources
// through the root tsconfig.json `paths`.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const demo = join(root, 'examples', 'demo');

/** Spawns `examples/demo/src/<entry>` with this process's argv and exits with its code. */
export function runDemoEntry(entry) {
  const tsx = createRequire(join(demo, 'package.json')).resolve('tsx');
  const child = spawn(
    process.execPath,
    ['--import', pathToFileURL(tsx).href, join(demo, 'src', entry), ...process.argv.slice(2)],
    {
      stdio: 'inherit',
      env: { ...process.env, TSX_TSCONFIG_PATH: join(root, 'tsconfig.json') },
    },
  );
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
