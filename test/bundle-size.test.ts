import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as adapter from '../packages/core/src/adapter.js';
import * as core from '../packages/core/src/index.js';
// @ts-expect-error a plain .mjs script without types
import { measureAll, measureParts, measureSource } from '../scripts/bundle-size.mjs';

interface Size {
  name: string;
  minBytes: number;
  gzipBytes: number;
  inputs: Array<{ file: string; bytes: number }>;
}

describe('scripts/bundle-size.mjs', () => {
  it('measures every entry, tree-shakes the breaker alone, and the READMEs state the numbers', async () => {
    const sizes = (await measureAll()) as Size[];
    const by = Object.fromEntries(sizes.map((s) => [s.name, s]));
    for (const s of sizes) {
      expect(s.gzipBytes).toBeGreaterThan(500);
      expect(s.gzipBytes).toBeLessThan(s.minBytes);
    }
    const breaker = by['createCircuitBreaker alone'] as Size;
    const protect = by['protect()'] as Size;
    const byHand = by['breaker + withRetry + withTimeout by hand'] as Size;
    // The three rules by hand pay for neither protect's runner nor its optional parts.
    expect(byHand.gzipBytes).toBeGreaterThan(breaker.gzipBytes);
    expect(
      byHand.inputs.some((i) => /protect|pool|gradient|adaptive|propagation/.test(i.file)),
    ).toBe(false);
    // Importing only the breaker pays only for it: none of protect's, retry's or the pool's code.
    expect(breaker.gzipBytes).toBeLessThan(protect.gzipBytes / 2);
    const files = breaker.inputs.map((i) => i.file);
    expect(files.some((f) => /protect|retry|pool|attempts|deadline/.test(f))).toBe(false);
    // The READMEs' figures are today's, to the 0.5 KB they are rounded to.
    const kb = (name: string) => ((by[name] as Size).gzipBytes / 1024).toFixed(1);
    const core = readFileSync(new URL('../packages/core/README.md', import.meta.url), 'utf8');
    const trpc = readFileSync(new URL('../packages/trpc/README.md', import.meta.url), 'utf8');
    const stated = (text: string, label: string) =>
      Number(new RegExp(`${label}[^|]*\\|\\s*([\\d.]+) KB`).exec(text)?.[1]);
    for (const [text, label, name] of [
      [core, '`protect\\(\\)`', 'protect()'],
      [core, '`createCircuitBreaker` alone', 'createCircuitBreaker alone'],
      [core, 'by hand', 'breaker + withRetry + withTimeout by hand'],
      [core, 'cockatiel', 'cockatiel wrap(retry, breaker, timeout)'],
      [trpc, '`resilienceLink\\(\\)` \\+ core', 'resilienceLink() + core'],
    ] as const) {
      expect(Math.abs(stated(text, label) - Number(kb(name)))).toBeLessThanOrEqual(0.5);
    }
  });

  it('a constant costs only itself: importing one keeps no factory it does not use', async () => {
    // Values with no behaviour of their own (numbers, frozen option tables);
    // a default built at import time (a backoff, a wheel) would drag its class in.
    const constantsOf = (entry: string, exports: object) =>
      Object.entries(exports)
        .filter(([, value]) => typeof value !== 'function')
        .filter(([, value]) => !Object.values(value as object).some((v) => typeof v === 'function'))
        .map(([name]) => ({ entry, name }));
    const constants = [
      ...constantsOf('@breakwater/core', core),
      ...constantsOf('@breakwater/core/adapter', adapter),
    ];
    expect(constants.map((c) => c.name)).toContain('DEFAULT_ATTEMPTS');
    const heavy: string[] = [];
    for (const { entry, name } of constants) {
      const { gzipBytes } = (await measureSource(
        `import { ${name} } from '${entry}'; export const x = ${name};`,
      )) as Size;
      // STANDARD_RESILIENCE, the largest table, is ~540 B by itself; a built default would add kilobytes.
      if (gzipBytes > 640) heavy.push(`${entry} ${name} ${gzipBytes} B`);
    }
    expect(heavy).toEqual([]);
  });

  it('each primitive alone pays for none of the others', async () => {
    const filesOf = async (name: string) =>
      (
        (await measureSource(
          `import { ${name} } from '@breakwater/core'; export const x = ${name};`,
        )) as Size
      ).inputs.map((i) => i.file);
    const others = {
      withTimeout: /breaker|retry|pool|limit|protect|routing|health/,
      withRetry: /breaker|pool|limit\/|protect|routing|health/,
      createPool: /breaker|retry|protect|routing|health|gradient/,
      createBackoff: /breaker|deadline|pool|limit|protect|routing|health/,
    };
    for (const [name, unwanted] of Object.entries(others)) {
      const files = await filesOf(name);
      expect(files.length, name).toBeGreaterThan(3);
      expect(
        files.filter((f) => unwanted.test(f)),
        name,
      ).toEqual([]);
    }
  });

  it('--parts weighs each optional part of protect() by leaving its modules out', async () => {
    const parts = (await measureParts('protect()')) as Array<{ part: string; gzipBytes: number }>;
    const by = Object.fromEntries(parts.map((p) => [p.part, p.gzipBytes]));
    // Each part is in the bundle whatever the options say, so each weighs something.
    for (const p of parts) expect(p.gzipBytes, p.part).toBeGreaterThan(100);
    // The breaker is most of the standalone breaker's 5.4 KB.
    expect(by['circuit breaker']).toBeGreaterThan(2_500);
  });
});
