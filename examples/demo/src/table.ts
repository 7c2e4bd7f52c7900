import type { ClientReport, ScenarioReport } from '@breakwater/chaos';

/** One row of the final comparison, as printed and as put in the report. */
export interface TableRow {
  client: string;
  success: string;
  faultSuccess: string;
  p50: string;
  p99: string;
  p999: string;
  outageAttempts: string;
  faultAttempts: string;
  recovery: string;
}

/** Column titles, in order. */
export const COLUMNS: ReadonlyArray<[keyof TableRow, string]> = [
  ['client', 'client'],
  ['success', 'success'],
  ['faultSuccess', 'success in faults'],
  ['p50', 'p50'],
  ['p99', 'p99'],
  ['p999', 'p99.9'],
  ['outageAttempts', 'attempts/call (outage)'],
  ['faultAttempts', 'attempts/call (faults)'],
  ['recovery', 'back on restarted'],
];

const pct = (v: number | undefined) => (v === undefined ? '–' : `${(v * 100).toFixed(1)}%`);
const ms = (v: number | undefined) => (v === undefined ? '–' : `${Math.round(v)} ms`);
const x = (v: number | undefined) => (v === undefined ? '–' : v.toFixed(2));

/** Formats one client's numbers. */
export function rowOf(c: ClientReport, hasRecovery: boolean): TableRow {
  return {
    client: c.client,
    success: pct(c.successRate),
    faultSuccess: pct(c.faultSuccessRate),
    p50: ms(c.latency.p50),
    p99: ms(c.latency.p99),
    p999: ms(c.latency.p999),
    outageAttempts: x(c.outageAttemptsPerCall),
    faultAttempts: x(c.faultAttemptsPerCall),
    recovery: !hasRecovery ? '–' : c.recoveryMs === undefined ? 'not seen' : ms(c.recoveryMs),
  };
}

/** All rows of a report. */
export function tableRows(report: ScenarioReport): TableRow[] {
  const hasRecovery = report.phases.some((p) => p.restores !== undefined);
  return report.clients.map((c) => rowOf(c, hasRecovery));
}

/** A plain-text table (monospace), with a blank line between protocols. */
export function formatTable(rows: readonly TableRow[]): string {
  const widths = COLUMNS.map(([key, title]) =>
    Math.max(title.length, ...rows.map((r) => r[key].length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join('  ');
  const out = [
    line(COLUMNS.map(([, title]) => title)),
    widths.map((w) => '─'.repeat(w)).join('  '),
  ];
  let protocol = '';
  for (const r of rows) {
    const p = r.client.split('/')[0] ?? '';
    if (protocol !== '' && p !== protocol) out.push('');
    protocol = p;
    out.push(line(COLUMNS.map(([key]) => r[key])));
  }
  return out.join('\n');
}
