import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScenarioReport } from '@breakwater/chaos';
import { describe, expect, it } from 'vitest';
import { parseDemoArgs } from './src/args.js';
import { runDemo } from './src/main.js';

describe('pnpm demo --quick', () => {
  it('writes a report with the chart data; Breakwater beats no resilience in the fault phases without amplifying', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'breakwater-demo-'));
    const out = join(dir, 'demo-report.html');
    const lines: string[] = [];
    try {
      // A modest rate keeps the run meaningful on a busy CI machine (the test runs beside other suites).
      const options = parseDemoArgs(
        ['--quick', '--rate', '20', '--no-progress', '--out', out],
        false,
      );
      if (options === 'help') throw new Error('unexpected help');
      const result = await runDemo(options, (line) => lines.push(line));

      const html = await readFile(out, 'utf8');
      const json = /<script type="application\/json" id="demo-data">(.*?)<\/script>/s.exec(
        html,
      )?.[1];
      expect(json).toBeDefined();
      const data = JSON.parse(json as string) as { report: ScenarioReport; table: unknown[] };
      expect(data.table).toHaveLength(6);
      expect(html.match(/<svg /g)?.length).toBeGreaterThanOrEqual(10);
      const byName = new Map(data.report.clients.map((c) => [c.client, c]));
      for (const protocol of ['grpc', 'trpc']) {
        const none = byName.get(`${protocol}/none`);
        const breakwater = byName.get(`${protocol}/breakwater`);
        expect(breakwater?.seconds.length).toBeGreaterThanOrEqual(8);
        expect(breakwater?.seconds.some((s) => Object.keys(s.load).length > 0)).toBe(true);
        expect(breakwater?.faultSuccessRate, protocol).toBeGreaterThan(none?.faultSuccessRate ?? 1);
        expect(breakwater?.outageAttemptsPerCall, protocol).toBeLessThanOrEqual(1.3);
      }
      expect(result.rows.map((r) => r.client)).toEqual([
        'grpc/none',
        'grpc/usual',
        'grpc/breakwater',
        'trpc/none',
        'trpc/usual',
        'trpc/breakwater',
      ]);
      expect(lines.join('\n')).toContain('attempts/call (outage)');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('rejects bad options naming them', () => {
    expect(() => parseDemoArgs(['--rate', 'lots'], false)).toThrow(/--rate/);
    expect(() => parseDemoArgs(['--scenario', 'nope'], false)).toThrow(/--scenario/);
    expect(parseDemoArgs(['--help'], true)).toBe('help');
    expect(parseDemoArgs([], true)).toMatchObject({ durationS: 26, rate: 25, progress: true });
    expect(parseDemoArgs(['--quick'], false)).toMatchObject({ durationS: 8, progress: false });
  });
});
