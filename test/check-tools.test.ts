import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../scripts/check-tools.mjs', import.meta.url));
const dirs: string[] = [];

/** A PATH holding only stand-ins named `tools`. */
function pathWith(tools: readonly string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'bw-tools-'));
  dirs.push(dir);
  for (const t of tools) {
    const file = join(dir, t);
    writeFileSync(file, '#!/bin/sh\nexit 0\n');
    chmodSync(file, 0o755);
  }
  return dir;
}

function run(path: string, ...args: string[]) {
  return spawnSync(process.execPath, [script, ...args], {
    env: { PATH: path },
    encoding: 'utf8',
  });
}

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('scripts/check-tools.mjs (the first step of pnpm test)', () => {
  it('names every missing tool and the one apt-get line that installs them, and fails', () => {
    const out = run(pathWith(['redis-cli']));
    expect(out.status).toBe(1);
    expect(out.stderr).toContain('Missing chromium, redis-server:');
    expect(out.stderr).toContain(
      'sudo apt-get install -y --no-install-recommends chromium redis-server',
    );
    expect(out.stderr).not.toMatch(/redis-tools|protobuf-compiler/);
  });

  it('passes silently when the test tools are there; protoc is asked for only by check:packages', () => {
    const path = pathWith(['chromium', 'redis-server', 'redis-cli']);
    const out = run(path);
    expect(out.status).toBe(0);
    expect(out.stderr).toBe('');
    const packages = run(path, '--packages');
    expect(packages.status).toBe(1);
    expect(packages.stderr).toContain('protobuf-compiler');
    expect(run(pathWith(['protoc']), '--packages').status).toBe(0);
  });
});
