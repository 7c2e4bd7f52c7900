import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const entry = (file: string) => fileURLToPath(new URL(`../src/${file}`, import.meta.url));
const nodeBuiltins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

/** The imports esbuild could not place in a browser bundle of `file`. */
async function browserBundleImports(file: string): Promise<string[]> {
  const result = await build({
    entryPoints: [entry(file)],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
    // Left external so the metafile lists them instead of failing the build on the first.
    external: [...nodeBuiltins],
  });
  return Object.values(result.metafile.inputs).flatMap((input) =>
    input.imports.filter((i) => i.external).map((i) => i.path),
  );
}

describe('platform neutrality', () => {
  it('bundles the main entry for the browser with no Node built-in', async () => {
    expect(await browserBundleImports('index.ts')).toEqual([]);
  });

  it('keeps the Node-only probes and the ambient inbound call (AsyncLocalStorage) on the node subpath', async () => {
    expect(new Set(await browserBundleImports('node.ts'))).toEqual(
      new Set(['node:async_hooks', 'node:http', 'node:https', 'node:net']),
    );
  });
});
