import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (pkg: string, entry = 'index') =>
  fileURLToPath(new URL(`./packages/${pkg}/src/${entry}.ts`, import.meta.url));
// Exact matches only: a plain string key would also rewrite the subpaths below.
const exact = (specifier: string, replacement: string) => ({
  find: new RegExp(`^${specifier.replace(/[/.]/g, '\\$&')}$`),
  replacement,
});

// Tests import every package (and subpath export) from source through these
// aliases: no build needed to test. Keep in step with tsconfig.json `paths`.
export default defineConfig({
  resolve: {
    alias: [
      exact('@breakwater/core', src('core')),
      exact('@breakwater/core/adapter', src('core', 'adapter')),
      exact('@breakwater/core/breaker', src('core', 'breaker/index')),
      exact('@breakwater/core/health', src('core', 'health/index')),
      exact('@breakwater/core/time', src('core', 'time/index')),
      exact('@breakwater/core/types', src('core', 'types')),
      exact('@breakwater/core/node', src('core', 'node')),
      exact('@breakwater/core/grpc', src('core', 'grpc/index')),
      exact('@breakwater/core/internal', src('core', 'internal/index')),
      exact('@breakwater/grpc-js', src('grpc-js')),
      exact('@breakwater/grpc-js/health', src('grpc-js', 'health')),
      exact('@breakwater/nice-grpc', src('nice-grpc')),
      exact('@breakwater/trpc', src('trpc')),
      exact('@breakwater/trpc/server', src('trpc', 'server')),
      exact('@breakwater/chaos', src('chaos')),
      exact('@breakwater/redis', src('redis')),
      exact('@breakwater/otel', src('otel')),
    ],
  },
  test: {
    // CI sets BREAKWATER_TEST_JSON to a path so it can print the pass/fail count.
    reporters: process.env.BREAKWATER_TEST_JSON
      ? ['default', ['json', { outputFile: process.env.BREAKWATER_TEST_JSON }]]
      : ['default'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: { name: 'core', include: ['packages/core/{src,test}/**/*.test.ts'] },
      },
      {
        extends: true,
        test: { name: 'grpc-js', include: ['packages/grpc-js/{src,test}/**/*.test.ts'] },
      },
      {
        extends: true,
        test: { name: 'nice-grpc', include: ['packages/nice-grpc/{src,test}/**/*.test.ts'] },
      },
      {
        extends: true,
        test: { name: 'trpc', include: ['packages/trpc/{src,test}/**/*.test.ts'] },
      },
      {
        extends: true,
        test: { name: 'redis', include: ['packages/redis/{src,test}/**/*.test.ts'] },
      },
      {
        extends: true,
        test: { name: 'otel', include: ['packages/otel/{src,test}/**/*.test.ts'] },
      },
      {
        extends: true,
        test: { name: 'chaos', include: ['packages/chaos/{src,test}/**/*.test.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          // Only unit tests of the benchmark harness: a benchmark itself is never a test.
          include: ['test/**/*.test.ts', 'examples/**/*.test.ts', 'bench/harness/**/*.test.ts'],
        },
      },
    ],
  },
});
