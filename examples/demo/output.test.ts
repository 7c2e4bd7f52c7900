import { type AttemptRecord, analyzeScenario, type CallRecord } from '@breakwater/chaos';
import { describe, expect, it } from 'vitest';
import { computeFindings, TIE_MS } from './src/findings.js';
import { LANE_DESCRIPTIONS } from './src/lane-descriptions.js';
import { barLayout, linesView } from './src/progress.js';
import { renderReport } from './src/report-html.js';
import { formatTable, tableRows, wrapLabelled } from './src/table.js';

// A small synthetic run (no servers): two phases, one protocol's three lanes.
const CLIENTS = ['grpc/none', 'grpc/usual', 'grpc/breakwater'];
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
    for (const [lane, d] of Object.entries(LANE_DESCRIPTIONS)) {
      const lines = wrapLabelled(lane, d.config, 15, 80);
      for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
      expect(lines.slice(1).every((l) => l.startsWith(' '.repeat(17)) && l[17] !== ' ')).toBe(true);
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

  it('findings state where Breakwater lost, with the numbers of the run and the evidence', () => {
    const lost = synthetic(false);
    const f = computeFindings(lost.report, lost.calls, lost.attempts);
    const grpc = f.protocols.find((p) => p.protocol === 'grpc');
    const text = grpc?.losses.join('\n') ?? '';
    // 10 of 20 recovery calls refused: 50.0% against 100.0%, none of them seen by a server.
    expect(text).toContain('In “recovered” (recovery) Breakwater answered 50.0% of calls');
    expect(text).toContain('10 × UNAVAILABLE; the servers saw none of those 10 calls');
    expect(text).toContain(LANE_DESCRIPTIONS['grpc/breakwater']?.recovery);
    expect(text).toContain(
      'Hedges and failovers cost the servers 1 extra attempts for the 30 Breakwater calls that reached one (+3.3% work); 1 calls reached two replicas.',
    );
    const row = f.recovery.find((r) => r.client === 'grpc/breakwater');
    expect(row?.first2s).toBe(0.5);
    expect(row?.firstSuccessMs).toBeGreaterThan(900);

    const won = synthetic(true);
    const none = computeFindings(won.report, won.calls, won.attempts);
    expect(none.protocols[0]?.losses).toEqual([]);
    const html = renderReport(
      won.report,
      tableRows(won.report),
      { scenario: 'test', rate: 10, durationS: 4, node: 'v20', date: 'today' },
      none,
    );
    expect(html).toContain('nowhere: no phase, p99 or recovery worse than another client.');
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

  it('findings say how Breakwater came back after each recovery and why, won or lost', () => {
    const why = `Why: ${LANE_DESCRIPTIONS['grpc/breakwater']?.recovery}`;
    const won = synthetic(true);
    const first = computeFindings(won.report, won.calls, won.attempts).protocols[0];
    expect(first?.comeback).toEqual([
      'After “recovered”, first success: none 12 ms, usual 12 ms, breakwater 12 ms (Breakwater level with the fastest). Its first call started after the recovery succeeded.',
      why,
    ]);
    const lost = synthetic(false);
    const last = computeFindings(lost.report, lost.calls, lost.attempts).protocols[0];
    expect(last?.comeback[0]).toMatch(
      /breakwater 1012 ms \(Breakwater last\)\. Its first 10 calls started after the recovery failed or were refused\.$/,
    );
    expect(last?.comeback[1]).toBe('Why: see “How Breakwater comes back” above.');
    expect(last?.losses).toContain(
      `How Breakwater comes back: ${LANE_DESCRIPTIONS['grpc/breakwater']?.recovery}`,
    );
  });
});
