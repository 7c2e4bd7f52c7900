import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDemoArgs } from './src/args.js';
import { type DemoResult, runDemo } from './src/main.js';
import type { LaneMetrics } from './src/telemetry.js';

const sum = (r: Record<string, number>) => Object.values(r).reduce((n, v) => n + v, 0);

// The outage scenario (healthy, every replica failing, recovered): the Breakwater
// lanes' own OpenTelemetry metrics, per phase, against what the servers counted.
// Only relations that hold however the machine schedules the calls are asserted:
// the metrics count a call when it ends and the servers by when it started, and
// attempts that never reached a server (refused connections, hedges cancelled
// before they left) are the client's alone, so the two are not equal.
describe('pnpm demo: the report draws from the Breakwater lanes’ OpenTelemetry metrics', () => {
  let dir = '';
  let result: DemoResult;
  const lines: string[] = [];
  let html = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'breakwater-demo-metrics-'));
    const options = parseDemoArgs(
      ['--quick', '--scenario', 'outage', '--no-progress', '--out', join(dir, 'r.html')],
      false,
    );
    if (options === 'help') throw new Error('unexpected help');
    result = await runDemo(options, (line) => lines.push(...line.split('\n')));
    html = await readFile(result.reportPath, 'utf8');
  }, 120_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const lane = (name: string) => result.metrics.find((m) => m.lane === name) as LaneMetrics;
  /** Attempts the servers counted for `name`'s calls over the whole run. */
  const serverAttempts = (name: string) =>
    result.attempts
      .filter((a) => a.callId.startsWith(`${name}-`))
      .reduce((n, a) => n + (a.count ?? 1), 0);

  it('every Breakwater lane has one row per phase, and the phases add up to the run', () => {
    expect(result.metrics.map((m) => m.lane)).toEqual(['grpc/breakwater', 'trpc/breakwater']);
    for (const m of result.metrics) {
      expect(m.phases.map((p) => p.phase)).toEqual(result.report.phases.map((p) => p.name));
      expect(m.phases.reduce((n, p) => n + p.calls, 0)).toBe(m.total.calls);
      expect(m.phases.reduce((n, p) => n + p.attempts, 0)).toBe(m.total.attempts);
      expect(m.phases.reduce((n, p) => n + p.failovers, 0)).toBe(m.total.failovers);
    }
  });

  it('over the run: every call ended is counted once, and the client started at least the attempts the servers saw', () => {
    for (const name of ['grpc/breakwater', 'trpc/breakwater']) {
      const m = lane(name);
      const calls = result.calls.filter((c) => c.client === name).length;
      expect(calls, name).toBeGreaterThan(0);
      expect(m.total.calls, name).toBe(calls);
      expect(serverAttempts(name), name).toBeGreaterThan(0);
      expect(m.total.attempts, name).toBeGreaterThanOrEqual(serverAttempts(name));
    }
  });

  it('no target refused and no circuit transition while healthy; refusals counted during the outage', () => {
    for (const m of result.metrics) {
      const healthy = m.phases.find((p) => p.kind === 'healthy');
      const outage = m.phases.find((p) => p.kind === 'outage');
      expect(healthy?.calls, m.lane).toBeGreaterThan(0);
      // No call or target refused while healthy. A loaded machine can make attempts slower than
      // the 150 ms hedge delay; the budget refusing some of those hedges is the budget at work.
      const { 'budget-exhausted': budgetRefused = 0, ...refused } = healthy?.refusals ?? {};
      expect(refused, m.lane).toEqual({});
      if (budgetRefused > 0) expect(healthy?.hedges, m.lane).toBeGreaterThan(0);
      expect(healthy?.transitions, m.lane).toEqual({});
      expect(sum(outage?.refusals ?? {}), m.lane).toBeGreaterThan(0);
      expect(outage?.refusals['circuit-open'] ?? 0, m.lane).toBeGreaterThan(0);
      expect(outage?.transitions['closed→open'] ?? 0, m.lane).toBeGreaterThan(0);
      // Shown beside the metrics: the servers' count for the same phase.
      expect(outage?.serverAttempts, m.lane).toBeGreaterThan(0);
    }
  });

  it('the terminal and the HTML report show the section, within 80 columns', () => {
    const at = lines.findIndex((l) => l.startsWith("What Breakwater's own metrics counted"));
    expect(at).toBeGreaterThan(0);
    const section = lines.slice(at);
    expect(section.filter((l) => l.length > 80)).toEqual([]);
    expect(section).toContain('grpc/breakwater');
    expect(section.some((l) => /^ {2}all replicas fai.* \d+/.test(l))).toBe(true);
    expect(html).toContain("What Breakwater's own metrics counted, per phase");
    expect(html).toContain('<table class="reflow metrics">');
    expect(html).toContain('"metrics":[{"lane":"grpc/breakwater"');
  });
});
