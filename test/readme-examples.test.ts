/**
 * README examples are tests.
 *
 * Convention (for every package and example README in this repo):
 * - A fenced code block whose info string is exactly `ts test` is run by this
 *   file; any other block (`ts`, `sh`, `ts test-skip`, ...) is only shown.
 *   Files scanned: `README.md`, `packages/<name>/README.md`, `examples/<name>/README.md`.
 * - Each block is a self-contained ES module: it imports what it uses
 *   (`@breakwater/*` resolve to the package sources through vitest's aliases)
 *   and proves its claims with `node:assert/strict`, so a wrong example fails.
 *   `console.log` is fine for the reader, but only assertions are checked.
 * - Blocks resolve packages from `test/` (the integration-tests package): a
 *   block may import what `test/package.json` lists (`@grpc/grpc-js`,
 *   `@trpc/client`, `@breakwater/chaos`, ...) and Node built-ins.
 * - Each block finishes in well under a second: time goes through
 *   `createManualClock()` from `@breakwater/core` (pass `clock` and
 *   `clock.sleep`, drive it with `clock.run(promise)`), never real waiting.
 *   Real servers listen on `127.0.0.1` port 0 and are closed in `finally`.
 * - Blocks are written to `test/.readme-examples/<pid>/<readme>-<n>.ts`
 *   (git-ignored; removed after a run in which every block passed; one folder
 *   per process so parallel runs do not clobber each other) and loaded with `import()`. The code sits on the same line numbers as in
 *   the README, so a stack trace points at the README line.
 * - Blocks of `packages/redis/README.md` run against real servers this file
 *   starts for them: a redis-server at `process.env.REDIS_URL` and a
 *   three-master Redis Cluster at `process.env.REDIS_CLUSTER_URL` (one node's
 *   URL); a block reads the URL as an application reads its configuration.
 * - The blocks are also type-checked against the package sources (a README
 *   that compiles only because esbuild strips types is still wrong).
 *
 * Run: `npx vitest run --project integration test/readme-examples.test.ts`.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type RedisCluster,
  type RedisServer,
  startRedisCluster,
  startRedisServer,
} from '../packages/redis/test/redis-server.js';

const root = join(import.meta.dirname, '..');
const outDir = join(import.meta.dirname, '.readme-examples', String(process.pid));

/** A runnable block: where it comes from and its source. */
interface Block {
  readme: string;
  index: number;
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
}

/** The READMEs the convention covers, repo-relative, in a stable order. */
function readmes(): string[] {
  const found = ['README.md'];
  for (const dir of ['packages', 'examples']) {
    const abs = join(root, dir);
    if (!existsSync(abs)) continue;
    for (const name of readdirSync(abs).sort()) {
      if (existsSync(join(abs, name, 'README.md'))) found.push(`${dir}/${name}/README.md`);
    }
  }
  return found;
}

/**
 * Fenced blocks whose info string is exactly `ts test` (CommonMark fences:
 * three or more backticks or tildes; the closing fence uses the same
 * character and is at least as long).
 */
export function extractBlocks(readme: string, text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const open = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(lines[i] as string);
    if (!open) continue;
    const fence = open[1] as string;
    const info = (open[2] as string).trim();
    const close = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    let end = i + 1;
    while (end < lines.length && !close.test(lines[end] as string)) end++;
    if (info === 'ts test') {
      blocks.push({
        readme,
        index: blocks.length + 1,
        line: i + 1,
        code: lines.slice(i + 1, end).join('\n'),
      });
    }
    i = end;
  }
  return blocks;
}

/** `packages/core/README.md` → `core`, `examples/demo/README.md` → `examples-demo`, root → `root`. */
function slug(readme: string): string {
  if (readme === 'README.md') return 'root';
  const [dir, name] = readme.split('/');
  return dir === 'packages' ? (name as string) : `${dir}-${name}`;
}

/** Writes a block so its code keeps the README's line numbers (line 1 names the source). */
function writeBlock(block: Block): string {
  const file = join(outDir, `${slug(block.readme)}-${block.index}.ts`);
  const header = `// Generated from ${block.readme}:${block.line} by test/readme-examples.test.ts; do not edit.`;
  const padding = '\n'.repeat(Math.max(0, block.line - 1));
  writeFileSync(file, `${header}${padding}\n${block.code}\n`);
  return file;
}

/** Type errors in `files`, checked with the repo's compiler options and `@breakwater/*` paths. */
function typeErrors(files: string[]): string[] {
  const configPath = join(root, 'tsconfig.json');
  const config = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  assert.ok(config, 'tsconfig.json could not be read');
  const program = ts.createProgram(files, { ...config.options, noEmit: true });
  const wanted = new Set(files.map((f) => ts.sys.resolvePath(f)));
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file !== undefined && wanted.has(ts.sys.resolvePath(d.file.fileName)))
    .map((d) => {
      const file = d.file as ts.SourceFile;
      const { line } = file.getLineAndCharacterOfPosition(d.start ?? 0);
      const text = file.text.split('\n', 1)[0] ?? '';
      const source = /Generated from (\S+):/.exec(text)?.[1] ?? relative(root, file.fileName);
      return `${source}:${line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
}

// Fresh output every run, removed afterwards: a block removed from a README must not linger
// (and `tsc -p .`, which includes test/, never sees stale copies).
rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
// Kept when a block failed, so the report can show its code (at the README's line numbers).
let failed = false;
afterAll(() => {
  if (!failed) rmSync(outDir, { recursive: true, force: true });
});
const blocks = readmes().flatMap((readme) =>
  extractBlocks(readme, readFileSync(join(root, readme), 'utf8')),
);
const files = new Map(blocks.map((b) => [b, writeBlock(b)]));

const REDIS_README = 'packages/redis/README.md';

describe('README `ts test` blocks', () => {
  // The redis README's blocks talk to real servers, started only when a block needs them.
  let redis: RedisServer | undefined;
  let cluster: RedisCluster | undefined;
  beforeAll(async () => {
    const code = blocks.filter((b) => b.readme === REDIS_README).map((b) => b.code);
    if (code.some((c) => c.includes('REDIS_URL'))) {
      redis = await startRedisServer();
      process.env.REDIS_URL = `redis://127.0.0.1:${redis.port}`;
    }
    if (code.some((c) => c.includes('REDIS_CLUSTER_URL'))) {
      cluster = await startRedisCluster();
      process.env.REDIS_CLUSTER_URL = `redis://127.0.0.1:${cluster.ports[0]}`;
    }
  }, 60_000);
  afterAll(async () => {
    await redis?.stop();
    await cluster?.stop();
  });

  it('finds the blocks of the root and core READMEs, and every TypeScript block of the redis README', () => {
    expect(blocks.some((b) => b.readme === 'README.md')).toBe(true);
    expect(blocks.filter((b) => b.readme === 'packages/core/README.md').length).toBeGreaterThan(10);
    const redisText = readFileSync(join(root, REDIS_README), 'utf8');
    const tsFences = redisText.split('\n').filter((line) => /^ {0,3}(`{3,}|~{3,})ts\b/.test(line));
    expect(blocks.filter((b) => b.readme === REDIS_README)).toHaveLength(tsFences.length);
    expect(tsFences.length).toBeGreaterThan(1);
  });

  it('type-check against the package sources', () => {
    expect(typeErrors([...files.values()])).toEqual([]);
  }, 60_000);

  for (const [block, file] of files) {
    it(`${block.readme} block ${block.index} (line ${block.line})`, async () => {
      try {
        await import(/* @vite-ignore */ pathToFileURL(file).href);
      } catch (error) {
        failed = true;
        throw error;
      }
    }, 10_000);
  }
});

describe('the harness itself', () => {
  it('extracts only exact `ts test` fences, with their line numbers', () => {
    const text = [
      '# t',
      '```ts test',
      'a();',
      '```',
      '```ts',
      'skipped();',
      '```',
      '````ts test',
      '```',
      'inner fence stays code',
      '````',
      '~~~ts test-skip',
      'nope();',
      '~~~',
    ].join('\n');
    const found = extractBlocks('X.md', text);
    expect(found.map((b) => [b.index, b.line, b.code])).toEqual([
      [1, 2, 'a();'],
      [2, 8, '```\ninner fence stays code'],
    ]);
  });

  it('a block whose assertion is wrong fails its test', async () => {
    const file = writeBlock({
      readme: 'packages/selftest/README.md',
      index: 1,
      line: 3,
      code: "import assert from 'node:assert/strict';\nassert.equal(1 + 1, 3);",
    });
    await expect(import(/* @vite-ignore */ pathToFileURL(file).href)).rejects.toThrow(
      assert.AssertionError,
    );
  });
});
