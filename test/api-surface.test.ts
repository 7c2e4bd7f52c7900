import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
// @ts-expect-error a plain .mjs script without types
import { countExports } from '../scripts/export-counts.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

interface Counted {
  entry: string;
  values: string[];
  types: string[];
}

describe("core's public surface", () => {
  it('the root entry exports at most 80 names, none of them generic', () => {
    const [counted] = countExports(['packages/core/src/index.ts']) as Counted[];
    const names = [...(counted as Counted).values, ...(counted as Counted).types];
    expect(names.length).toBeLessThanOrEqual(80);
    for (const generic of ['all', 'any', 'unchanged', 'Sample', 'Event']) {
      expect(names).not.toContain(generic);
    }
    // One breaker options type: the aliases and second copies of the defaults are gone.
    for (const alias of [
      'CircuitBreakerSettings',
      'CircuitBreakerConfig',
      'DEFAULT_CIRCUIT_BREAKER_OPTIONS',
      'getDefaultCircuitBreakerConfig',
    ]) {
      expect(names).not.toContain(alias);
    }
  });
});

describe('API reference (TypeDoc)', () => {
  it('documents every public entry point of every package', () => {
    const config = JSON.parse(read('typedoc.json')) as { entryPoints: string[] };
    for (const pkg of ['core', 'grpc-js', 'nice-grpc', 'trpc', 'otel', 'redis']) {
      const manifest = JSON.parse(read(`packages/${pkg}/package.json`)) as {
        exports: Record<string, string | { import: { default: string } }>;
      };
      for (const [subpath, target] of Object.entries(manifest.exports)) {
        if (typeof target === 'string' || subpath === './internal') continue;
        // ./dist/esm/breaker/index.js → packages/core/src/breaker/index.ts
        const source = target.import.default
          .replace('./dist/esm/', `packages/${pkg}/src/`)
          .replace(/\.js$/, '.ts');
        expect(config.entryPoints, `${pkg} ${subpath}`).toContain(source);
      }
    }
  });

  it('builds with no warnings: every {@link} resolves and every linked name is documented', async () => {
    const typedoc = join(root, 'node_modules/typedoc/bin/typedoc');
    // typedoc.json sets treatWarningsAsErrors, so a broken link fails the run.
    const run = promisify(execFile)(process.execPath, [typedoc, '--emit', 'none'], { cwd: root });
    const { stdout } = await run;
    expect(stdout).not.toMatch(/warning|error/i);
  }, 120_000);
});
