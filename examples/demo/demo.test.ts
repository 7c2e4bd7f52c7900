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

  // The other two scenarios, end to end: each asserts the behaviour it exists to show.
  async function quickRun(scenario: string) {
    const dir = await mkdtemp(join(tmpdir(), `breakwater-demo-${scenario}-`));
    try {
      const options = parseDemoArgs(
        [
          '--quick',
          '--scenario',
          scenario,
          '--rate',
          '20',
          '--no-progress',
          '--out',
          join(dir, 'r.html'),
        ],
        false,
      );
      if (options === 'help') throw new Error('unexpected help');
      const result = await runDemo(options, () => {});
      return new Map(result.report.clients.map((c) => [c.client, c]));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  it('--scenario outage: Breakwater sheds load while every replica fails; the usual retries amplify it', async () => {
    const byName = await quickRun('outage');
    for (const protocol of ['grpc', 'trpc']) {
      const usual = byName.get(`${protocol}/usual`)?.outageAttemptsPerCall;
      const breakwater = byName.get(`${protocol}/breakwater`)?.outageAttemptsPerCall;
      expect(usual, protocol).toBeGreaterThanOrEqual(2);
      expect(breakwater, protocol).toBeLessThanOrEqual(0.5);
    }
  }, 120_000);

  it('--scenario tail: Breakwater hedging cuts the p99 that one slow replica sets for the others', async () => {
    const byName = await quickRun('tail');
    for (const protocol of ['grpc', 'trpc']) {
      const none = byName.get(`${protocol}/none`);
      const breakwater = byName.get(`${protocol}/breakwater`);
      expect(breakwater?.successRate, protocol).toBe(1);
      expect(breakwater?.latency.p99, protocol).toBeLessThan((none?.latency.p99 ?? 0) * 0.75);
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
