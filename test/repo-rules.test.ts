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

describe('repository rules', () => {
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
