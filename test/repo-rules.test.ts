import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const FORBIDDEN = /Date\.now\(|Math\.random\(|(^|[^a-zA-Z_.$])setTimeout\(/;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.[cm]?ts$/.test(name) && !/\.test\.ts$/.test(name)) out.push(path);
  }
  return out;
}

/** Lines in package sources, outside a `time/` module, that read time, randomness or timers directly. */
export function findForbidden(packagesDir: string): string[] {
  const hits: string[] = [];
  for (const pkg of readdirSync(packagesDir)) {
    const src = join(packagesDir, pkg, 'src');
    try {
      statSync(src);
    } catch {
      continue;
    }
    for (const file of sourceFiles(src)) {
      const rel = relative(root, file);
      if (rel.split(/[\\/]/).includes('time')) continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (FORBIDDEN.test(line)) hits.push(`${rel}:${i + 1}: ${line.trim()}`);
        });
    }
  }
  return hits;
}

/**
 * Files on the per-call path of a successful call. In them an object is never
 * built as `{ ...options, key }`: Node 20's V8 takes a slow path (about 1 µs
 * per key) to add a key the spread source lacks to a spread copy; use
 * `Object.assign({}, options, { key })`.
 */
const PER_CALL_FILES = [
  'packages/core/src/deadline/with-timeout.ts',
  'packages/core/src/deadline/timer-wheel.ts',
  'packages/core/src/protect/call.ts',
  'packages/core/src/retry/with-retry.ts',
  'packages/grpc-js/src/deadline-interceptor.ts',
  'packages/grpc-js/src/circuit-breaker-interceptor.ts',
  'packages/grpc-js/src/bulkhead-interceptor.ts',
  'packages/grpc-js/src/rate-limit-interceptor.ts',
  'packages/grpc-js/src/internals/stage.ts',
  'packages/grpc-js/src/internals/observed-call.ts',
  'packages/grpc-js/src/internals/multi-attempt-call.ts',
  'packages/nice-grpc/src/deadline-middleware.ts',
  'packages/nice-grpc/src/retry-middleware.ts',
  'packages/nice-grpc/src/hedging-middleware.ts',
  'packages/nice-grpc/src/circuit-breaker-middleware.ts',
  'packages/nice-grpc/src/bulkhead-middleware.ts',
  'packages/nice-grpc/src/rate-limit-middleware.ts',
  'packages/nice-grpc/src/internals/attempt.ts',
  'packages/nice-grpc/src/internals/retry-chain.ts',
  'packages/nice-grpc/src/internals/unary-stage.ts',
  'packages/trpc/src/internals/fused-call.ts',
  // The chaos Echo server answers every benchmark call: its cost is on their path too.
  'packages/chaos/src/grpc/server.ts',
  'packages/chaos/src/grpc/recorder.ts',
];

/** An object literal that spreads first and then names more keys. */
const SPREAD_THEN_KEYS = /\{\s*\.\.\.[\w.$]+\s*,(?!\s*\})/g;

/** `file:line` of every spread-then-keys object literal in `files` (paths from the root). */
export function findSpreadThenKeys(files: readonly string[]): string[] {
  const hits: string[] = [];
  for (const rel of files) {
    // Comments blanked (newlines kept, so line numbers hold): they may quote the pattern.
    const text = readFileSync(join(root, rel), 'utf8').replace(
      /\/\*[\s\S]*?\*\/|\/\/[^\n]*/g,
      (comment) => comment.replace(/[^\n]/g, ' '),
    );
    for (const match of text.matchAll(SPREAD_THEN_KEYS)) {
      hits.push(`${rel}:${text.slice(0, match.index).split('\n').length}`);
    }
  }
  return hits;
}

describe('repository rules', () => {
  it('builds no object as { ...options, key } on the per-call path', () => {
    expect(findSpreadThenKeys(PER_CALL_FILES)).toEqual([]);
  });

  it('the spread scan catches one-line and multi-line literals, and lets a lone spread pass', () => {
    expect('const o = { ...a, b: 1 };'.match(SPREAD_THEN_KEYS)).not.toBeNull();
    expect('const o = {\n  ...caller,\n  metadata,\n};'.match(SPREAD_THEN_KEYS)).not.toBeNull();
    expect('const o = { ...a };'.match(SPREAD_THEN_KEYS)).toBeNull();
    expect('const o = { ...a, };'.match(SPREAD_THEN_KEYS)).toBeNull();
    expect('const { a, ...rest } = o;'.match(SPREAD_THEN_KEYS)).toBeNull();
    expect('const list = [...a, b];'.match(SPREAD_THEN_KEYS)).toBeNull();
  });

  it('reads Date.now, Math.random and setTimeout only in time modules', () => {
    expect(findForbidden(join(root, 'packages'))).toEqual([]);
  });

  it('the scan itself catches a violation', () => {
    expect(FORBIDDEN.test('const t = Date.now();')).toBe(true);
    expect(FORBIDDEN.test('const r = Math.random();')).toBe(true);
    expect(FORBIDDEN.test('setTimeout(fn, 1)')).toBe(true);
    expect(FORBIDDEN.test('  x = setTimeout(fn, 1)')).toBe(true);
    expect(FORBIDDEN.test('timers.setTimeoutish()')).toBe(false);
  });
});
