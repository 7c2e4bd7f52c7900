// Measures what a browser user pays: each entry below is bundled from the
// packages' TypeScript sources with esbuild (minified, tree-shaken, ESM, the
// frameworks left external as the user already has them), then gzipped.
// `node scripts/bundle-size.mjs` prints a table; `--json` prints the numbers;
// `--top N` adds each entry's N largest source files (from esbuild's metafile);
// `--parts` adds what each optional part of `protect()` and `resilienceLink()`
// adds to it (the entry bundled again with that part's modules left empty).
import { readFileSync } from 'node:fs';
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
  // The same three rules as cockatiel's wrap below, nested by hand from core's
  // primitives, without protect()'s other parts: what those rules cost here.
  'breaker + withRetry + withTimeout by hand': `import { createCircuitBreaker, withRetry, withTimeout } from '@breakwater/core';
const breaker = createCircuitBreaker({ failureThreshold: 5, openDurationMs: 10_000 });
export const run = (op) =>
  breaker.execute(() =>
    withRetry((signal) => withTimeout(op, { timeoutMs: 1_000, signal }), { attempts: 3 }),
  );`,
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

/**
 * The parts of a stack its options turn on or off, each as the core modules
 * only that part needs. `protect()` and `resilienceLink()` bundle every part
 * whatever the options say (they are chosen at run time); `--parts` shows
 * what each one weighs.
 */
export const PARTS = {
  'adaptive concurrency': [
    'limit/gradient-limit',
    'limit/adaptive-limiter',
    'limit/admission',
    'routing/latency-sample',
  ],
  'circuit breaker': [
    'breaker/circuit-breaker',
    'breaker/machine',
    'breaker/config',
    'breaker/window',
    'breaker/snapshot',
  ],
  'deadlines (timer wheel)': ['deadline/timer-wheel'],
  'backoff schedules': ['retry/backoff'],
  'option checking': ['internal/validate'],
  'telemetry and onEvent': ['attempts/telemetry', 'attempts/resilience-events'],
  propagation: [
    'propagation/inherit',
    'propagation/inbound',
    'propagation/overloaded',
    'propagation/recent-failures',
    'propagation/propagate-options',
  ],
  'concurrency pool': ['pool/pool', 'pool/linked-list'],
  'rate limit': ['limit/token-bucket', 'limit/bucket'],
  'retry budget': ['retry/budget'],
};

/** A stand-in for a module left out: its exported names, each bound to an empty value. */
function emptyModule(file) {
  const names = [
    ...readFileSync(file, 'utf8').matchAll(
      /^export (?:abstract )?(?:async )?(function\*?|const|let|class) (\w+)/gm,
    ),
  ];
  return names
    .map(([, kind, name]) =>
      kind === 'class' ? `export class ${name} {}` : `export const ${name} = () => {};`,
    )
    .join('\n');
}

/** Leaves the modules of `files` empty (see {@link emptyModule}). */
function leaveOut(files) {
  return {
    name: 'leave-out',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) =>
        files.has(args.path) ? { contents: emptyModule(args.path), loader: 'ts' } : undefined,
      );
    },
  };
}

/** Bundles one entry; returns its min and min+gzip bytes and its inputs' bytes in the output. */
export async function measure(name) {
  return { name, ...(await measureSource(ENTRIES[name])) };
}

/** What each of {@link PARTS} adds to entry `name`, in min+gzip bytes, largest first. */
export async function measureParts(name) {
  const whole = (await measureSource(ENTRIES[name])).gzipBytes;
  const parts = [];
  for (const [part, modules] of Object.entries(PARTS)) {
    const files = new Set(modules.map((m) => join(root, 'packages/core/src', `${m}.ts`)));
    const without = (await measureSource(ENTRIES[name], [leaveOut(files)])).gzipBytes;
    parts.push({ part, gzipBytes: whole - without });
  }
  return parts.sort((a, b) => b.gzipBytes - a.gzipBytes);
}

/** Bundles `contents`, the one file a user would write. */
export async function measureSource(contents, plugins = []) {
  const result = await build({
    stdin: { contents, resolveDir: join(root, 'test'), loader: 'ts' },
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
    plugins,
  });
  const code = result.outputFiles[0].contents;
  const output = Object.values(result.metafile.outputs)[0];
  const inputs = Object.entries(output.inputs)
    .map(([file, { bytesInOutput }]) => ({ file: relative(root, file), bytes: bytesInOutput }))
    .sort((a, b) => b.bytes - a.bytes);
  return {
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

/** The entries `--parts` breaks down: the stacks that carry every part. */
const PARTED = ['resilienceLink() + core', 'protect()'];

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
      if (process.argv.includes('--parts') && PARTED.includes(s.name)) {
        for (const p of await measureParts(s.name)) {
          console.log(`    ${kb(p.gzipBytes).padStart(8)}  min+gzip  ${p.part}`);
        }
      }
    }
  }
}
