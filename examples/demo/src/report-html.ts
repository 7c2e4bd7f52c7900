import type { ClientReport, ScenarioReport } from '@breakwater/chaos';
import { type ChartBand, renderLineChart } from './svg-chart.js';
import { COLUMNS, type TableRow } from './table.js';

/** What the report embeds besides the scenario report. */
export interface ReportMeta {
  scenario: string;
  rate: number;
  durationS: number;
  node: string;
  date: string;
}

const COLORS: Record<string, string> = {
  none: '#8c8c8c',
  usual: '#e67e22',
  breakwater: '#1f77b4',
};
const REPLICA_COLORS = ['#d62728', '#2ca02c', '#9467bd', '#17becf'];
const BAND_FILL: Record<string, string> = {
  healthy: 'rgba(0,0,0,0)',
  fault: 'rgba(255,165,0,0.13)',
  outage: 'rgba(220,20,60,0.12)',
  recovery: 'rgba(46,160,67,0.12)',
};

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function bands(report: ScenarioReport): ChartBand[] {
  return report.phases.map((p) => ({
    from: p.startMs / 1000,
    to: p.endMs / 1000,
    label: p.name,
    fill: BAND_FILL[p.kind] ?? BAND_FILL.healthy ?? 'none',
  }));
}

const flavour = (c: ClientReport) => c.client.split('/')[1] ?? c.client;
const mid = (report: ScenarioReport, t: number) => t + report.bucketMs / 2000;

function protocolCharts(report: ScenarioReport, protocol: string): string {
  const clients = report.clients.filter((c) => c.client.startsWith(`${protocol}/`));
  const xMax = report.durationMs / 1000;
  const common = { bands: bands(report), xMax };
  const success = renderLineChart({
    ...common,
    title: `${protocol}: success rate per second`,
    yMax: 100,
    yFormat: (v) => `${v}%`,
    series: clients.map((c) => ({
      name: flavour(c),
      color: COLORS[flavour(c)] ?? '#000',
      points: c.seconds.map(
        (s) =>
          [
            mid(report, s.t),
            s.successRate === undefined ? undefined : s.successRate * 100,
          ] as const,
      ),
    })),
  });
  const latencyMax = Math.max(50, ...clients.flatMap((c) => c.seconds.map((s) => s.p99 ?? 0)));
  const latency = renderLineChart({
    ...common,
    title: `${protocol}: p99 latency per second (all calls, ms)`,
    yMax: Math.ceil(latencyMax / 50) * 50,
    yFormat: (v) => `${v}`,
    series: clients.map((c) => ({
      name: flavour(c),
      color: COLORS[flavour(c)] ?? '#000',
      points: c.seconds.map((s) => [mid(report, s.t), s.p99] as const),
    })),
  });
  const replicas = report.replicas.filter((r) => r.startsWith(`${protocol}-`));
  const loadMax = Math.max(
    1,
    ...clients.flatMap((c) => c.seconds.flatMap((s) => replicas.map((r) => s.load[r] ?? 0))),
  );
  const loads = clients.map((c) =>
    renderLineChart({
      ...common,
      width: 660,
      height: 190,
      title: `${c.client}: server-side attempts per second, by replica`,
      yMax: Math.ceil(loadMax / 10) * 10,
      yFormat: (v) => `${v}`,
      series: replicas.map((r, i) => ({
        name: r,
        color: REPLICA_COLORS[i % REPLICA_COLORS.length] ?? '#000',
        points: c.seconds.map((s) => [mid(report, s.t), s.load[r] ?? 0] as const),
      })),
    }),
  );
  return `<section><h2>${esc(protocol === 'grpc' ? 'gRPC (3 replicas)' : 'tRPC (2 servers)')}</h2>${success}${latency}${loads.join('')}</section>`;
}

function table(rows: readonly TableRow[]): string {
  const head = COLUMNS.map(([, t]) => `<th>${esc(t)}</th>`).join('');
  const body = rows
    .map((r) => {
      const cls = r.client.endsWith('/breakwater') ? ' class="bw"' : '';
      return `<tr${cls}>${COLUMNS.map(([k]) => `<td>${esc(r[k])}</td>`).join('')}</tr>`;
    })
    .join('');
  return `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/**
 * A self-contained HTML report: the comparison table, charts over time as
 * inline SVG, and every number as JSON in `<script id="demo-data">`.
 */
export function renderReport(
  report: ScenarioReport,
  rows: readonly TableRow[],
  meta: ReportMeta,
): string {
  const data = JSON.stringify({ meta, table: rows, report }).replace(/</g, '\\u003c');
  const phases = report.phases
    .map(
      (p) =>
        `<li><b>${esc(p.name)}</b> (${p.kind}) ${(p.startMs / 1000).toFixed(1)}–${(p.endMs / 1000).toFixed(1)} s</li>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Breakwater demo report</title>
<style>
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:18px 0 6px}
.meta{color:#555;margin-bottom:12px}
table{border-collapse:collapse;margin:8px 0 16px} th,td{padding:4px 10px;border-bottom:1px solid #ddd;text-align:right}
th:first-child,td:first-child{text-align:left} tr.bw td{font-weight:600;background:#eef5fc}
.grid-2{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:12px}
svg{display:block;margin:6px 0;background:#fff}
svg .title{font-size:13px;font-weight:600;fill:#222} svg .tick{font-size:10px;fill:#555}
svg .band{font-size:10px;fill:#444} svg .legend{font-size:11px;fill:#333}
svg .grid{stroke:#eee} svg .frame{fill:none;stroke:#bbb}
ul{margin:4px 0 8px 18px;padding:0}
</style></head>
<body>
<h1>Breakwater demo: the same load, three clients, replicas failing on a schedule</h1>
<div class="meta">scenario <b>${esc(meta.scenario)}</b> · ${meta.rate} calls/s per client (open loop) · ${meta.durationS} s · Node ${esc(meta.node)} · ${esc(meta.date)}</div>
<ul>${phases}</ul>
${table(rows)}
<p class="meta">Latency covers every call, failures included (1 s deadline). Attempts per call are counted by the servers (x-call-id). “back on restarted” is the time from the restarted replica listening again until it answered this client.</p>
<div class="grid-2">${protocolCharts(report, 'grpc')}${protocolCharts(report, 'trpc')}</div>
<script type="application/json" id="demo-data">${data}</script>
</body></html>
`;
}
