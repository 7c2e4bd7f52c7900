// Measures what a browser user pays: each entry below is bundled from the
// packages' TypeScript sources with esbuild (minified, tree-shaken, ESM, the
// frameworks left external as the user already has them), then gzipped.
// `node scripts/bundle-size.mjs` prints a table; `--json` prints the numbers;
// `--top N` adds each entry's N largest source files (from esbuild's metafile).
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = (pkg, entry = 'index') => join(root, 'packages', pkg, 'src', `${entry}.ts`);

/** What a user imports, as the one file they would write. */
export const ENTRIES = {
  'resilienceLink() + core': `import { resilienceLink } from '@breakwater/trpc'; export const link = resilienceLink();`,
  'protect()': `import { protect } from '@breakwater/core'; export const run = protect();`,
  'createCircuitBreaker alone': `import { createCircuitBreaker } from '@breakwater/core'; export const breaker = createCircuitBreaker();`,
  'cockatiel wrap(retry, breaker, timeout)': `import { ConsecutiveBreaker, TimeoutStrategy, circuitBreaker, handleAll, retry, timeout, wrap } from 'cockatiel';
export const policy = wrap(
  retry(handleAll, { maxAttempts: 3 }),
  circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) }),
  timeout(1_000, TimeoutStrategy.Aggressive),
);`,
};

const ALIAS = {
  '@breakwater/core': src('core'),
  '@breakwater/core/adapter': src('core', 'adapter'),
  '@breakwater/core/breaker': src('core', 'breaker/index'),
  '@breakwater/core/grpc': src('core', 'grpc/index'),
  '@breakwater/core/health': src('core', 'health/index'),
  '@breakwater/core/time': src('core', 'time/index'),
  '@breakwater/core/types': src('core', 'types'),
  '@breakwater/core/internal': src('core', 'internal/index'),
  '@breakwater/trpc': src('trpc'),
};

/** Bundles one entry; returns its min and min+gzip bytes and its inputs' bytes in the output. */
export async function measure(name) {
  const result = await build({
    stdin: { contents: ENTRIES[name], resolveDir: join(root, 'test'), loader: 'ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
    alias: ALIAS,
    external: ['@trpc/*'],
  });
  const code = result.outputFiles[0].contents;
  const output = Object.values(result.metafile.outputs)[0];
  const inputs = Object.entries(output.inputs)
    .map(([file, { bytesInOutput }]) => ({ file: relative(root, file), bytes: bytesInOutput }))
    .sort((a, b) => b.bytes - a.bytes);
  return {
    name,
    minBytes: code.byteLength,
    gzipBytes: gzipSync(code, { level: 9 }).byteLength,
    inputs,
  };
}

/** Every entry's sizes. */
export async function measureAll() {
  const sizes = [];
  for (const name of Object.keys(ENTRIES)) sizes.push(await measure(name));
  return sizes;
}

const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sizes = await measureAll();
  if (process.argv.includes('--json')) {
    console.log(
      JSON.stringify(
        sizes.map(({ inputs, ...s }) => s),
        null,
        2,
      ),
    );
  } else {
    const topAt = process.argv.indexOf('--top');
    const top = topAt === -1 ? 0 : Number(process.argv[topAt + 1] ?? 10);
    for (const s of sizes) {
      console.log(
        `${s.name.padEnd(42)} ${kb(s.minBytes).padStart(9)} min  ${kb(s.gzipBytes).padStart(8)} min+gzip`,
      );
      for (const input of s.inputs.slice(0, top)) {
        console.log(`    ${kb(input.bytes).padStart(8)}  ${input.file}`);
      }
    }
  }
}
