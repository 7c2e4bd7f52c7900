import type { ClientReport, ScenarioReport } from '@breakwater/chaos';
import { type Findings, type ProtocolFindings, recoveryCells } from './findings.js';
import { describeLane } from './lane-descriptions.js';
import { type ChartBand, renderLineChart } from './svg-chart.js';
import { COLUMNS, type TableRow } from './table.js';
import { type LaneMetrics, METRIC_HEAD, METRICS_HOW_TO_READ, metricCells } from './telemetry.js';

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
  hedging: '#9b59b6',
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

// "How to read this" for each kind of chart; the computed line follows it.
const HOW = {
  success:
    'Share of the calls started in each second that succeeded; the shaded bands are the phases listed above. A dip is a second in which calls failed.',
  latency:
    'The 99th-percentile latency of the calls started in each second, failures included: a refused call is fast, a call that runs into the 1 s deadline counts about 1000 ms.',
  load: "Attempts each replica received per second for this client's calls, as counted by the servers. A line at 0 is a replica that got none of its calls (killed, or its circuit open); a total above the client's rate is retries, failovers or hedges.",
};

function protocolCharts(report: ScenarioReport, found: ProtocolFindings | undefined): string {
  const protocol = found?.protocol ?? '';
  const clients = report.clients.filter((c) => c.client.startsWith(`${protocol}/`));
  const xMax = report.durationMs / 1000;
  const common = { bands: bands(report), xMax };
  const success = renderLineChart({
    ...common,
    title: `${protocol}: success rate per second`,
    yMax: 100,
    yFormat: (v) => `${v}%`,
    note: `${esc(HOW.success)} <b>${esc(found?.charts.success ?? '')}</b>`,
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
    title: `${protocol}: p99 latency per second (ms)`,
    yMax: Math.ceil(latencyMax / 50) * 50,
    yFormat: (v) => `${v}`,
    note: `${esc(HOW.latency)} <b>${esc(found?.charts.latency ?? '')}</b>`,
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
  const loads = clients.map((c, i) =>
    renderLineChart({
      ...common,
      height: 170,
      title: `${c.client}: server attempts per second, by replica`,
      yMax: Math.ceil(loadMax / 10) * 10,
      yFormat: (v) => `${v}`,
      // One note for the three load charts, under the last.
      ...(i === clients.length - 1
        ? { note: `${esc(HOW.load)} <b>${esc(found?.charts.load ?? '')}</b>` }
        : {}),
      series: replicas.map((r, j) => ({
        name: r,
        color: REPLICA_COLORS[j % REPLICA_COLORS.length] ?? '#000',
        points: c.seconds.map((s) => [mid(report, s.t), s.load[r] ?? 0] as const),
      })),
    }),
  );
  return `<section><h2>${esc(protocol === 'grpc' ? 'gRPC (3 replicas)' : 'tRPC (2 servers)')}</h2>${success}${latency}${loads.join('')}</section>`;
}

/** A table that reflows into one card per row on a narrow screen (each cell labelled). */
function responsiveTable(
  head: readonly string[],
  rows: ReadonlyArray<{ cells: readonly string[]; highlight: boolean }>,
  cls = '',
): string {
  const th = head.map((t) => `<th>${esc(t)}</th>`).join('');
  const body = rows
    .map(
      (r) =>
        `<tr${r.highlight ? ' class="bw"' : ''}>${r.cells.map((c, i) => `<td data-label="${esc(head[i] ?? '')}">${esc(c)}</td>`).join('')}</tr>`,
    )
    .join('');
  return `<table class="reflow${cls ? ` ${cls}` : ''}"><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table>`;
}

function table(rows: readonly TableRow[]): string {
  return responsiveTable(
    COLUMNS.map(([, t]) => t),
    rows.map((r) => ({
      cells: COLUMNS.map(([k]) => r[k]),
      highlight: r.client.endsWith('/breakwater'),
    })),
  );
}

/** Per Breakwater lane and phase, what its own OpenTelemetry metrics counted, beside the servers' count. */
function metricsSection(lanes: readonly LaneMetrics[]): string {
  if (lanes.length === 0) return '';
  const tables = lanes
    .map(
      (lane) =>
        `<h3>${esc(lane.lane)}</h3>${responsiveTable(
          METRIC_HEAD,
          lane.phases.map((p) => ({ cells: metricCells(p), highlight: false })),
          'metrics',
        )}`,
    )
    .join('');
  return `<h2>What Breakwater's own metrics counted, per phase</h2>
${tables}
<p class="how"><b>How to read this:</b> ${esc(METRICS_HOW_TO_READ)}</p>`;
}

function recoveryTable(findings: Findings): string {
  if (findings.recovery.length === 0) return '';
  const head = [
    'client',
    'phase',
    'first success',
    'restored replica answering',
    'success, first 2 s',
    'how it comes back',
  ];
  const rows = findings.recovery.map((r) => ({
    cells: [r.client, r.phase, ...recoveryCells(r), describeLane(r.client).recovery],
    highlight: r.client.endsWith('/breakwater'),
  }));
  return `<h2>Recovery: how each client came back</h2>
${responsiveTable(head, rows, 'recovery')}
<p class="how"><b>How to read this:</b> “first success” is the time from the phase's change (the replicas healed or restarted) until the client's first call that succeeded after it; “restored replica answering” is the time until the replica that was brought back answered this client (“not seen”: it never did in the seconds left); “success, first 2 s” covers the calls started in the first two seconds of the phase. A client that sheds load in an outage (stops sending to a replica whose circuit is open) has to notice the replica is back before it sends to it again: the last column says how each client does that, and the numbers say what it cost in this run.</p>`;
}

const STYLE = `
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;padding:16px 24px;color:#222;max-width:1400px}
h1{font-size:22px;margin:0 0 4px;line-height:1.25} h2{font-size:17px;margin:20px 0 6px}
.meta{color:#555;margin-bottom:12px;overflow-wrap:anywhere}
.how{color:#333;font-size:14px;margin:4px 0 14px;max-width:80ch}
table{border-collapse:collapse;margin:8px 0 6px}
th,td{padding:4px 10px;border-bottom:1px solid #ddd;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left;white-space:nowrap} tr.bw td{font-weight:600;background:#eef5fc}
table.recovery td:last-child{text-align:left;font-weight:400;min-width:24ch}
table.metrics td:nth-last-child(-n+2),table.metrics th:nth-last-child(-n+2){text-align:left}
dl.clients{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px;margin:6px 0 12px}
dl.clients dt{font-weight:600;white-space:nowrap} dl.clients dd{margin:0}
ul{margin:4px 0 8px 18px;padding:0} li{margin:2px 0}
.swatch{display:inline-block;width:12px;height:12px;border:1px solid #bbb;vertical-align:-1px;margin-right:6px}
.grid-2{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:12px 28px}
figure.chart{margin:10px 0 6px}
figure.chart figcaption{display:flex;flex-wrap:wrap;gap:2px 14px;align-items:baseline;font-size:14px}
.legend{display:flex;flex-wrap:wrap;gap:2px 12px;font-size:13px}
.key i{display:inline-block;width:18px;vertical-align:middle;margin-right:5px}
svg{display:block;width:100%;height:auto;margin:2px 0;background:#fff}
svg .tick{font-size:10px;fill:#555} svg .band{font-size:10px;fill:#444}
svg .grid{stroke:#eee} svg .frame{fill:none;stroke:#bbb}
@media (max-width:760px){
  body{padding:12px}
  .grid-2{grid-template-columns:minmax(0,1fr)}
  dl.clients{grid-template-columns:minmax(0,1fr)} dl.clients dd{margin:0 0 8px}
  table.reflow,table.reflow tbody,table.reflow tr,table.reflow td{display:block;width:100%}
  table.reflow thead{display:none}
  table.reflow tr{border:1px solid #ddd;border-radius:6px;margin:0 0 8px;padding:4px 0}
  table.reflow td{display:flex;justify-content:space-between;gap:12px;border:0;padding:2px 10px;text-align:right;white-space:normal}
  table.reflow td::before{content:attr(data-label);color:#555;font-weight:400;text-align:left}
  table.reflow td:first-child{font-size:16px}
  table.recovery td:last-child{display:block;text-align:left;min-width:0}
  table.recovery td:last-child::before{display:block}
}
@media (max-width:560px){
  svg .tick{font-size:14px} svg .band{display:none}
}`;

/**
 * A self-contained HTML report: what each client is, the comparison table,
 * where Breakwater did worse (computed), how each client recovered, charts
 * over time as inline SVG, a "how to read this" under each, and every number
 * as JSON in `<script id="demo-data">`. Readable from 375 px up.
 */
export function renderReport(
  report: ScenarioReport,
  rows: readonly TableRow[],
  meta: ReportMeta,
  findings: Findings,
  metrics: readonly LaneMetrics[] = [],
): string {
  const data = JSON.stringify({ meta, table: rows, report, findings, metrics }).replace(
    /</g,
    '\\u003c',
  );
  const phases = report.phases
    .map(
      (p) =>
        `<li><span class="swatch" style="background:${BAND_FILL[p.kind] ?? 'none'}"></span><b>${esc(p.name)}</b> (${p.kind}) ${(p.startMs / 1000).toFixed(1)}–${(p.endMs / 1000).toFixed(1)} s</li>`,
    )
    .join('');
  const clients = report.clients
    .map((c) => `<dt>${esc(c.client)}</dt><dd>${esc(describeLane(c.client).config)}</dd>`)
    .join('');
  const verdicts = findings.protocols
    .map(
      (p) =>
        `<li><b>${esc(p.protocol)}</b>: ${esc(p.verdict)}${
          p.losses.length === 0
            ? ''
            : `<ul>${p.losses.map((l) => `<li>${esc(l)}</li>`).join('')}</ul>`
        }</li>`,
    )
    .join('');
  const byProtocol = new Map(findings.protocols.map((p) => [p.protocol, p]));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>Breakwater demo report</title>
<style>${STYLE}</style></head>
<body>
<h1>Breakwater demo: the same load and the same faults for every client, replicas failing on a schedule</h1>
<div class="meta">scenario <b>${esc(meta.scenario)}</b> · ${meta.rate} calls/s per client (open loop) · ${meta.durationS} s · Node ${esc(meta.node)} · ${esc(meta.date)}</div>
<h2>The clients</h2>
<dl class="clients">${clients}</dl>
<h2>The timeline</h2>
<ul>${phases}</ul>
<h2>Results</h2>
${table(rows)}
<p class="how"><b>How to read this:</b> “success” is the share of started calls that succeeded within the 1 s deadline; “success in faults” the same over the fault and outage phases. Latency covers every call, failures included: a call refused at once is fast, one that runs into the deadline counts about 1 s. “attempts/call” is what the servers counted (by x-call-id) per call started in those phases: below 1 when calls failed before reaching any server (connection refused, circuit open), above 1 for retries, failovers and hedges — in an outage, above 1 is load piled on servers that are already failing. “back on restarted” is the time from the restarted replica listening again until it answered this client. Numbers vary between runs; on a busy machine the latency columns mostly measure CPU starvation.</p>
<h2>Breakwater against the best other client of its protocol</h2>
<ul>${verdicts}</ul>
<p class="how">Computed from this run's numbers (not written in advance), against the best other client of the same protocol: in every phase Breakwater's success is at least the best's − 0.5 point, over the whole run at least the best's − 0.2 point, its p99 over the run at most 1.2 × the best p99 + 10 ms, and in a full outage (a phase where no client answers 10% of its calls: shedding is the measure, not success) at most 0.3 server attempts per call. A missed goal gets one line with the numbers, and for a phase how many of Breakwater's failed calls never reached a server.</p>
${recoveryTable(findings)}
${metricsSection(metrics)}
<div class="grid-2">${protocolCharts(report, byProtocol.get('grpc'))}${protocolCharts(report, byProtocol.get('trpc'))}</div>
<script type="application/json" id="demo-data">${data}</script>
</body></html>
`;
}
