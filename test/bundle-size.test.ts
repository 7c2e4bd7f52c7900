import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error a plain .mjs script without types
import { measureAll } from '../scripts/bundle-size.mjs';

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
      [trpc, '`resilienceLink\\(\\)` \\+ core', 'resilienceLink() + core'],
    ] as const) {
      expect(Math.abs(stated(text, label) - Number(kb(name)))).toBeLessThanOrEqual(0.5);
    }
  });
});
