import type { ScenarioPhase, ScenarioReport } from '@breakwater/chaos';
import type { Telemetry } from '@breakwater/core';
import { METRICS, otelTelemetry } from '@breakwater/otel';
import type { Attributes } from '@opentelemetry/api';
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  MetricReader,
} from '@opentelemetry/sdk-metrics';
import { wrapLabelled } from './table.js';

/** A reader that keeps nothing: each `collect()` reads the SDK's cumulative state. */
class InMemoryReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** What one lane's metrics said so far (cumulative) or in one phase (a difference). */
export interface MetricFigures {
  /** Calls that ended (`breakwater.call.duration` count). */
  calls: number;
  /** Attempts those calls started, hedges abandoned by the call's end included (from `breakwater.call.attempts`). */
  attempts: number;
  /** Retries on the same target (`breakwater.retries`). */
  retries: number;
  /** Moves to the next target (`breakwater.failovers`). */
  failovers: number;
  /** Hedged attempts sent (`breakwater.hedges.sent`). */
  hedges: number;
  /** Refusals by reason (`breakwater.refusals`): a target skipped for its open circuit, a hedge or failover the budget refused, … */
  refusals: Record<string, number>;
  /** Circuit transitions (`breakwater.circuit.transitions`) by `from→to`, every target together. */
  transitions: Record<string, number>;
}

/** One Breakwater lane's figures in one phase: from its metrics, and what the servers counted. */
export interface PhaseMetrics extends MetricFigures {
  phase: string;
  kind: string;
  /** Attempts the servers counted (by x-call-id) for the calls started in the phase. */
  serverAttempts: number | undefined;
}

/** One Breakwater lane's metrics, phase by phase. */
export interface LaneMetrics {
  lane: string;
  phases: PhaseMetrics[];
  /** The whole run (after every call ended): the sum of the phases. */
  total: MetricFigures;
}

type Point = DataPoint<number | Histogram>;

const sumOf = (points: readonly Point[] | undefined) =>
  (points ?? []).reduce((n, p) => n + (p.value as number), 0);

/** Adds each point's value under the key `keyOf` gives its attributes. */
function byKey(points: readonly Point[] | undefined, keyOf: (a: Attributes) => string) {
  const out: Record<string, number> = {};
  for (const p of points ?? []) {
    const key = keyOf(p.attributes);
    out[key] = (out[key] ?? 0) + (p.value as number);
  }
  return out;
}

function histogramOf(points: readonly Point[] | undefined): { count: number; sum: number } {
  let count = 0;
  let sum = 0;
  for (const p of points ?? []) {
    count += (p.value as Histogram).count;
    sum += (p.value as Histogram).sum ?? 0;
  }
  return { count, sum };
}

/** `a − b`, key by key (metrics are cumulative: a phase is the difference of two readings). */
function minus(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(a)) {
    const d = v - (b[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

function difference(a: MetricFigures, b: MetricFigures): MetricFigures {
  return {
    calls: a.calls - b.calls,
    attempts: a.attempts - b.attempts,
    retries: a.retries - b.retries,
    failovers: a.failovers - b.failovers,
    hedges: a.hedges - b.hedges,
    refusals: minus(a.refusals, b.refusals),
    transitions: minus(a.transitions, b.transitions),
  };
}

/** One lane's `otelTelemetry` on its own in-process SDK `MeterProvider`, read on demand. */
export class LaneTelemetry {
  private readonly reader = new InMemoryReader();
  /** The `telemetry` option of the lane's routing channel or routingLink. */
  readonly telemetry: Telemetry;
  private readonly readings: MetricFigures[] = [];

  constructor(readonly lane: string) {
    this.telemetry = otelTelemetry({
      meterProvider: new MeterProvider({ readers: [this.reader] }),
      // Metrics only: the demo's calls run under no span.
      spanEvents: false,
    });
  }

  /** The lane's cumulative figures now. */
  async read(): Promise<MetricFigures> {
    const { resourceMetrics } = await this.reader.collect();
    const m = new Map<string, Point[]>();
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics)
        m.set(metric.descriptor.name, metric.dataPoints as Point[]);
    }
    const calls = histogramOf(m.get(METRICS.callDuration));
    const multi = histogramOf(m.get(METRICS.callAttempts));
    return {
      calls: calls.count,
      // A one-attempt call is not in call.attempts (see the otel README): it adds 1 each.
      attempts: multi.sum + calls.count - multi.count,
      retries: sumOf(m.get(METRICS.retries)),
      failovers: sumOf(m.get(METRICS.failovers)),
      hedges: sumOf(m.get(METRICS.hedgesSent)),
      refusals: byKey(m.get(METRICS.refusals), (a) => String(a['breakwater.reason'])),
      transitions: byKey(
        m.get(METRICS.circuitTransitions),
        (a) => `${String(a['breakwater.circuit.from'])}→${String(a['breakwater.circuit.to'])}`,
      ),
    };
  }

  /** Reads the figures at a phase boundary (the first reading is the baseline). */
  async mark(): Promise<void> {
    this.readings.push(await this.read());
  }

  /** Per phase: the difference of the readings at its start and at the next (the last: the end of the run). */
  phases(report: ScenarioReport): LaneMetrics {
    const client = report.clients.find((c) => c.client === this.lane);
    const phases = report.phases.map((p, i): PhaseMetrics => {
      const from = this.readings[i];
      const to = this.readings[i + 1];
      const stats = client?.phases[i];
      const d =
        from === undefined || to === undefined ? difference(EMPTY, EMPTY) : difference(to, from);
      return {
        phase: p.name,
        kind: p.kind,
        ...d,
        serverAttempts:
          stats?.attemptsPerCall === undefined
            ? undefined
            : Math.round(stats.attemptsPerCall * stats.offered),
      };
    });
    const first = this.readings[0] ?? EMPTY;
    const last = this.readings.at(-1) ?? EMPTY;
    return { lane: this.lane, phases, total: difference(last, first) };
  }
}

const EMPTY: MetricFigures = {
  calls: 0,
  attempts: 0,
  retries: 0,
  failovers: 0,
  hedges: 0,
  refusals: {},
  transitions: {},
};

/**
 * `phases` with every lane's metrics read as each phase starts (before its
 * faults), so each phase's figures are the difference of two readings.
 */
export function markingPhases(
  phases: readonly ScenarioPhase[],
  lanes: readonly LaneTelemetry[],
): ScenarioPhase[] {
  const markAll = () => Promise.all(lanes.map((l) => l.mark()));
  return phases.map((p) => ({
    ...p,
    enter: async () => {
      await markAll();
      await p.enter?.();
    },
  }));
}

/** Reads every lane once more: the end of the last phase (call after the load drained). */
export async function markEnd(lanes: readonly LaneTelemetry[]): Promise<void> {
  await Promise.all(lanes.map((l) => l.mark()));
}

const sumValues = (r: Record<string, number>) => Object.values(r).reduce((n, v) => n + v, 0);

/** `reason n, reason n` (or `none`). */
const list = (r: Record<string, number>) =>
  Object.keys(r).length === 0
    ? 'none'
    : Object.entries(r)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');

/** The columns of the per-phase metrics table, after the phase name. */
const METRIC_COLUMNS: ReadonlyArray<[string, (p: PhaseMetrics) => string]> = [
  ['calls', (p) => String(p.calls)],
  ['attempts', (p) => String(p.attempts)],
  ['server', (p) => (p.serverAttempts === undefined ? '–' : String(p.serverAttempts))],
  ['retries', (p) => String(p.retries)],
  ['failovers', (p) => String(p.failovers)],
  ['hedges', (p) => String(p.hedges)],
  ['refused', (p) => String(sumValues(p.refusals))],
  ['circuit', (p) => String(sumValues(p.transitions))],
];

/** How to read the metrics section (terminal and HTML). */
export const METRICS_HOW_TO_READ =
  "From each Breakwater lane's own OpenTelemetry metrics (@breakwater/otel on an in-process SDK MeterProvider), read as each phase starts and at the end: a phase's figure is the difference of two readings. The metrics count a call and its attempts when the call ENDS; the servers' column (server) counts the attempts of the calls STARTED in the phase. So they differ: attempts include those that never reached a server (connection refused, a hedge cancelled before it left), and calls straddling a phase boundary land in different phases. Over the whole run the client's attempts are at least the servers'. retries: repeats on the same target (these lanes configure none: they fail over instead); refused: targets skipped for an open circuit, hedges or failovers the retry budget refused; circuit: transitions of the targets' circuits.";

/** The metrics section as terminal lines, each at most `columns` wide. */
export function formatMetrics(lanes: readonly LaneMetrics[], columns: number): string[] {
  const widths = METRIC_COLUMNS.map(([title]) => Math.max(title.length, 6) + 1);
  const rest = widths.reduce((a, b) => a + b, 0) + 2;
  const longest = Math.max(5, ...lanes.flatMap((l) => l.phases.map((p) => p.phase.length)));
  const nameWidth = Math.max(5, Math.min(longest, columns - rest));
  const cut = (s: string) => (s.length > nameWidth ? `${s.slice(0, nameWidth - 1)}…` : s);
  const row = (name: string, cells: readonly string[]) =>
    `  ${cut(name).padEnd(nameWidth)}${cells.map((c, i) => c.padStart(widths[i] as number)).join('')}`;
  const lines: string[] = [];
  for (const lane of lanes) {
    lines.push(lane.lane);
    lines.push(
      row(
        'phase',
        METRIC_COLUMNS.map(([t]) => t),
      ),
    );
    for (const p of lane.phases)
      lines.push(
        row(
          p.phase,
          METRIC_COLUMNS.map(([, f]) => f(p)),
        ),
      );
    for (const p of lane.phases) {
      if (sumValues(p.refusals) + sumValues(p.transitions) === 0) continue;
      const text = `${p.phase}: refused ${list(p.refusals)}; circuit transitions ${list(p.transitions)}`;
      lines.push(...wrapLabelled('', text, 0, columns));
    }
  }
  return lines;
}

/** Column titles of the metrics table in the HTML report. */
export const METRIC_HEAD: readonly string[] = [
  'phase',
  ...METRIC_COLUMNS.map(([t]) => t),
  'refused by reason',
  'circuit transitions',
];

/** One phase's cells under {@link METRIC_HEAD}. */
export function metricCells(p: PhaseMetrics): string[] {
  return [p.phase, ...METRIC_COLUMNS.map(([, f]) => f(p)), list(p.refusals), list(p.transitions)];
}
