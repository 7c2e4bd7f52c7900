import { type AttemptRecord, analyzeScenario, type CallRecord } from '@breakwater/chaos';
import { describe, expect, it } from 'vitest';
import { computeFindings, TIE_MS } from './src/findings.js';
import { LANE_DESCRIPTIONS } from './src/lane-descriptions.js';
import { barLayout, linesView } from './src/progress.js';
import { renderReport } from './src/report-html.js';
import { formatTable, tableRows, wrapLabelled } from './src/table.js';

// A small synthetic run (no servers): two phases, one protocol's three lanes.
const CLIENTS = ['grpc/none', 'grpc/usual', 'grpc/hedging', 'grpc/breakwater'];
const T0 = 1_000_000;

function synthetic(breakwaterOkInRecovery: boolean) {
  const calls: CallRecord[] = [];
  const attempts: AttemptRecord[] = [];
  for (const client of CLIENTS) {
    for (let i = 0; i < 40; i++) {
      const recovery = i >= 20;
      const callId = `${client}-${i}`;
      // Breakwater's circuit refuses the first half of the recovery phase without sending.
      const refused = !breakwaterOkInRecovery && client === 'grpc/breakwater' && recovery && i < 30;
      calls.push({
        client,
        callId,
        startedAt: T0 + i * 100,
        latencyMs: refused ? 1 : 12,
        ok: !refused,
        ...(refused ? { error: 'UNAVAILABLE' } : { replica: i % 2 ? 'grpc-a' : 'grpc-b' }),
      });
      if (!refused) attempts.push({ callId, replica: i % 2 ? 'grpc-a' : 'grpc-b' });
      // One hedged call: its hedge reached the other replica too.
      if (!breakwaterOkInRecovery && client === 'grpc/breakwater' && i === 5) {
        attempts.push({ callId, replica: 'grpc-b' });
      }
    }
  }
  const report = analyzeScenario({
    clients: CLIENTS,
    calls,
    attempts,
    phases: [
      {
        name: 'healthy',
        kind: 'healthy',
        restores: undefined,
        start: T0,
        readyAt: T0,
        end: T0 + 2_000,
      },
      {
        name: 'recovered',
        kind: 'recovery',
        restores: undefined,
        start: T0 + 2_000,
        readyAt: T0 + 2_000,
        end: T0 + 4_000,
      },
    ],
    startedAt: T0,
    endedAt: T0 + 4_000,
  });
  return { report, calls, attempts };
}

describe('demo output', () => {
  it('the table fits 80 columns in aligned blocks, and a wide terminal gets one block', () => {
    const { report } = synthetic(true);
    const rows = tableRows(report);
    const narrow = formatTable(rows, 80).split('\n');
    for (const line of narrow) expect(line.length, line).toBeLessThanOrEqual(80);
    // Every block starts with the client column, so each row stays readable on its own.
    const headers = narrow.filter((l) => l.startsWith('client '));
    expect(headers.length).toBeGreaterThan(1);
    expect(narrow.join('\n')).toContain('back on restarted');
    const wide = formatTable(rows, 200).split('\n');
    expect(wide.filter((l) => l.startsWith('client '))).toHaveLength(1);
    expect(Math.max(...wide.map((l) => l.length))).toBeGreaterThan(80);
  });

  it('wrapped descriptions and progress lines fit 80 columns and stay aligned', () => {
    // The terminal pads every name to the longest one's width.
    const width = Math.max(...Object.keys(LANE_DESCRIPTIONS).map((lane) => lane.length));
    for (const [lane, d] of Object.entries(LANE_DESCRIPTIONS)) {
      const lines = wrapLabelled(lane, d.config, width, 80);
      for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
      const indent = width + 2;
      expect(
        lines.slice(1).every((l) => l.startsWith(' '.repeat(indent)) && l[indent] !== ' '),
      ).toBe(true);
    }
    const logged: string[] = [];
    const view = linesView((l) => logged.push(l), 0);
    view.update({
      elapsedMs: 12_345,
      totalMs: 26_000,
      phase: 'B long tail (10% +400 ms)',
      phaseIndex: 1,
      clients: [...CLIENTS, 'trpc/none', 'trpc/usual', 'trpc/breakwater'].map((client) => ({
        client,
        offered: 9999,
        succeeded: 9999,
        failed: 0,
        inFlight: 999,
      })),
    });
    expect(logged.length).toBe(3);
    for (const line of logged) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it('progress bars fit the terminal: label + bar + info stay under the width', () => {
    // The info text after a bar is 31 characters wide (see progress.ts).
    const labels = ['B long tail (10% +400 ms)', 'grpc/breakwater', 'all replicas failing'];
    for (const columns of [60, 80, 120]) {
      const { labelWidth, barsize } = barLayout(columns, labels);
      expect(labelWidth + 1 + barsize + 1 + 31, String(columns)).toBeLessThan(columns);
      expect(barsize).toBeGreaterThanOrEqual(10);
    }
    expect(barLayout(200, labels).barsize).toBe(28);
  });

  it('findings state each missed goal in one short line, with the numbers of the run and the evidence', () => {
    const lost = synthetic(false);
    const f = computeFindings(lost.report, lost.calls, lost.attempts);
    const grpc = f.protocols.find((p) => p.protocol === 'grpc');
    expect(grpc?.verdict).toBe('Breakwater missed 2 goals:');
    // 10 of 20 recovery calls refused: 50.0% against 100.0%, none of them seen by a server.
    expect(grpc?.losses).toEqual([
      '“recovered”: 50.0% vs none 100.0% (−50.0 pt); 10 of its 10 failures never reached a server (10 × UNAVAILABLE).',
      'Whole run: 75.0% vs none 100.0% (−25.0 pt; limit −0.2 pt).',
    ]);
    for (const loss of grpc?.losses ?? []) {
      expect(wrapLabelled('grpc:', loss, 5, 80).length, loss).toBeLessThanOrEqual(2);
    }
    const row = f.recovery.find((r) => r.client === 'grpc/breakwater');
    expect(row?.first2s).toBe(0.5);
    expect(row?.firstSuccessMs).toBeGreaterThan(900);

    const won = synthetic(true);
    const none = computeFindings(won.report, won.calls, won.attempts);
    expect(none.protocols[0]?.losses).toEqual([]);
    expect(none.protocols[0]?.verdict).toBe(
      'Breakwater met every goal: every phase ≥ best − 0.5 pt (closest +0.0 pt, “healthy”), run 100.0% vs 100.0%, p99 12 ≤ 24 ms.',
    );
    const html = renderReport(
      won.report,
      tableRows(won.report),
      { scenario: 'test', rate: 10, durationS: 4, node: 'v20', date: 'today' },
      none,
    );
    expect(html).toContain('<b>grpc</b>: Breakwater met every goal: every phase');
    expect(html).toContain(LANE_DESCRIPTIONS['grpc/usual']?.config);
    expect(html.match(/class="how"/g)?.length).toBeGreaterThanOrEqual(6);
  });

  it('ranks recovery times within TIE_MS as level, not last; beyond it, last', () => {
    const place = (extraMs: number) => {
      const run = synthetic(true);
      const calls = run.calls.map((c) =>
        c.client === 'grpc/breakwater' ? { ...c, latencyMs: c.latencyMs + extraMs } : c,
      );
      return computeFindings(run.report, calls, run.attempts).protocols[0]?.comeback[0];
    };
    expect(place(TIE_MS - 1)).toMatch(/\(Breakwater level with the fastest\)/);
    expect(place(TIE_MS + 5)).toMatch(/\(Breakwater last\)/);
  });

  it('findings say how Breakwater came back after each recovery, won or lost', () => {
    const won = synthetic(true);
    const first = computeFindings(won.report, won.calls, won.attempts).protocols[0];
    expect(first?.comeback).toEqual([
      'After “recovered”, first success: none 12 ms, usual 12 ms, hedging 12 ms, breakwater 12 ms (Breakwater level with the fastest). Its first call started after the recovery succeeded.',
    ]);
    const lost = synthetic(false);
    const last = computeFindings(lost.report, lost.calls, lost.attempts).protocols[0];
    expect(last?.comeback[0]).toMatch(
      /breakwater 1012 ms \(Breakwater last\)\. Its first 10 calls started after the recovery failed or were refused\.$/,
    );
    expect(last?.comeback).toHaveLength(1);
    // The long explanation of how it comes back is in the README, not the output.
    expect(last?.losses.join('\n')).not.toContain('probe');
  });
});
