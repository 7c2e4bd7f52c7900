import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (pkg: string) =>
  fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url));

// Tests import every package from source through these aliases: no build needed to test.
export default defineConfig({
  resolve: {
    alias: {
      // Before '@breakwater/core', which would otherwise match the subpath as a prefix.
      '@breakwater/core/grpc': fileURLToPath(
        new URL('./packages/core/src/grpc/index.ts', import.meta.url),
      ),
      '@breakwater/core': src('core'),
      '@breakwater/grpc-js': src('grpc-js'),
      '@breakwater/nice-grpc': src('nice-grpc'),
      '@breakwater/trpc': src('trpc'),
      '@breakwater/chaos': src('chaos'),
      '@breakwater/redis': src('redis'),
    },
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
