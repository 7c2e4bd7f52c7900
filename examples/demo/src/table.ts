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

/** Pads `cell` to `width`: the first column left-aligned, numbers right-aligned. */
const pad = (cell: string, width: number, first: boolean) =>
  first ? cell.padEnd(width) : cell.padStart(width);

/**
 * A plain-text table (monospace), with a blank line between protocols, that
 * fits `columns` characters: when every column does not fit on one line, the
 * columns are split into blocks printed one under the other, each repeating
 * the client column, so every block stays aligned. Defaults to 80 columns.
 */
export function formatTable(rows: readonly TableRow[], columns = 80): string {
  const gap = 2;
  const widths = COLUMNS.map(([key, title]) =>
    Math.max(title.length, ...rows.map((r) => r[key].length)),
  );
  const first = widths[0] ?? 0;
  // Greedy split: keep adding columns to a block while the line fits.
  const blocks: number[][] = [];
  let block: number[] = [];
  let used = first;
  for (let i = 1; i < COLUMNS.length; i++) {
    const w = (widths[i] ?? 0) + gap;
    if (block.length > 0 && used + w > columns) {
      blocks.push(block);
      block = [];
      used = first;
    }
    block.push(i);
    used += w;
  }
  if (block.length > 0) blocks.push(block);
  const out: string[] = [];
  for (const [b, indexes] of blocks.entries()) {
    if (b > 0) out.push('');
    const shown = [0, ...indexes];
    const line = (cells: (i: number) => string) =>
      shown.map((i) => pad(cells(i), widths[i] ?? 0, i === 0)).join(' '.repeat(gap));
    out.push(line((i) => COLUMNS[i]?.[1] ?? ''));
    out.push(line((i) => '─'.repeat(widths[i] ?? 0)));
    let protocol = '';
    for (const r of rows) {
      const p = r.client.split('/')[0] ?? '';
      if (protocol !== '' && p !== protocol) out.push('');
      protocol = p;
      out.push(line((i) => r[COLUMNS[i]?.[0] ?? 'client']));
    }
  }
  return out.join('\n');
}

/**
 * Wraps `text` to `columns` characters after a `label` column of `labelWidth`,
 * so continuation lines stay aligned under the first line's text.
 */
export function wrapLabelled(
  label: string,
  text: string,
  labelWidth: number,
  columns = 80,
): string[] {
  const indent = ' '.repeat(labelWidth + 2);
  const room = Math.max(20, columns - indent.length);
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (current !== '' && current.length + 1 + word.length > room) {
      lines.push(current);
      current = word;
    } else {
      current = current === '' ? word : `${current} ${word}`;
    }
  }
  lines.push(current);
  return lines.map((l, i) => (i === 0 ? `${label.padEnd(labelWidth)}  ${l}` : `${indent}${l}`));
}
