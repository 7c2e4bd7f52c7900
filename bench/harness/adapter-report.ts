/**
 * The adapters suite's tables and targets, built from the per-round figures
 * of its lanes (plain data, so the rows can be tested without running a lane).
 */

import { pairedRatios, type Spread, spread } from '@breakwater/chaos';
import type { Variant } from '../suites/adapter-lanes.js';
import type { VariantRounds } from './closed-loop.js';
import { fmt, fx, pct, type Table, type TargetResult } from './report.js';

/** What one adapter measured at one concurrency. */
export interface Measured {
  adapter: string;
  concurrency: number;
  /** Per-round figures of every variant that ran. */
  rounds: Partial<Record<Variant, VariantRounds>>;
}

/**
 * A bare client sending the stack's deadline, to compare the stack with:
 * its lane and what it does with the deadline, in words for the table.
 */
export interface DeadlineBaseline {
  variant: Variant;
  /** E.g. "`deadline` call option: sent, and enforced by grpc-js's own timer". */
  label: string;
}

/** Spread of the per-round ratios `of / over` of `figure`; undefined when either did not run. */
export function paired(
  r: Measured,
  of: Variant,
  over: Variant,
  figure: keyof VariantRounds = 'throughput',
): Spread | undefined {
  const a = r.rounds[of];
  const b = r.rounds[over];
  return a && b ? spread(pairedRatios(a[figure], b[figure])) : undefined;
}

/** "median [min–max]" of a ratio spread, "–" when not measured. */
export const ratioCell = (s: Spread | undefined) =>
  s ? `${pct(s.median)} [${pct(s.min)}–${pct(s.max)}]` : '–';

function rateCell(series: number[] | undefined): string {
  if (!series) return '–';
  const s = spread(series);
  return `${fmt(s.median, 0)} (${fmt(s.min, 0)}–${fmt(s.max, 0)})`;
}

/** Client + server CPU µs per call of each round of `v`; undefined when not measured. */
function cpuPerCall(r: Measured, v: Variant): number[] | undefined {
  const rounds = r.rounds[v];
  if (!rounds || rounds.clientCpuUs.length === 0 || rounds.serverCpuUs.length === 0)
    return undefined;
  return rounds.clientCpuUs.map((c, i) => c + (rounds.serverCpuUs[i] as number));
}

/** Median of the per-round figure `figure` of `v`. */
export function cpuCell(
  r: Measured,
  v: Variant,
  figure: 'clientCpuUs' | 'serverCpuUs' | 'clientBytes',
  digits = 1,
): string {
  const series = r.rounds[v]?.[figure];
  return series && series.length > 0 ? fmt(spread(series).median, digits) : '–';
}

/**
 * CPU capacity of `of` relative to `over`: per round, `over`'s client + server
 * CPU per call divided by `of`'s (what a CPU-bound pair of processes could
 * serve), median and min–max over rounds.
 */
function capacity(r: Measured, of: Variant, over: Variant): Spread | undefined {
  const a = cpuPerCall(r, of);
  const b = cpuPerCall(r, over);
  return a && b ? spread(pairedRatios(b, a)) : undefined;
}

const p99Cell = (r: Measured, v: Variant) => fmt(spread(r.rounds[v]?.p99 ?? []).median, 2);

/** Headline target: full stack vs bare without a deadline, judged on the median of paired rounds. */
export function headlineTarget(adapter: string, mine: Measured[]): TargetResult {
  const name = `${adapter} adapter ≥ 97% of bare throughput`;
  if (mine.length === 0) {
    return { target: name, figure: '–', met: null, note: 'not measured: see the adapter table' };
  }
  const medians = mine.map((r) => paired(r, 'stack', 'bare')?.median ?? Number.NaN);
  const worst = Math.min(...medians);
  const noise = mine
    .map((r) => `c=${r.concurrency} ${ratioCell(paired(r, 'bareAgain', 'bare'))}`)
    .join(', ');
  return {
    target: name,
    figure: mine.map((r, i) => `c=${r.concurrency}: ${pct(medians[i])}`).join(', '),
    met: worst >= 0.97,
    note: [
      ...(worst >= 0.97
        ? []
        : [`short by ${((0.97 - worst) * 100).toFixed(1)} points at the worst concurrency`]),
      `noise floor (bare / bare A/A): ${noise}`,
    ].join('; '),
  };
}

/** What {@link adapterTables} needs besides the figures. */
export interface AdapterTablesOptions {
  /** The deadline every stack sets and every baseline sends, ms. */
  deadlineMs: number;
  /** The deadline baselines of each adapter, by its display name, in table order. */
  baselines: Readonly<Record<string, readonly DeadlineBaseline[]>>;
  /** Adapters or concurrencies that were not measured, and why. */
  skipped: readonly string[];
}

/**
 * The suite's three tables: stack vs bare (headline), stack vs each bare
 * client that sends the same deadline (one row per baseline lane that ran),
 * and CPU and bytes per call.
 */
export function adapterTables(
  results: readonly Measured[],
  options: AdapterTablesOptions,
): Table[] {
  const headline: Table = {
    title:
      'Throughput (calls/s) and p99 latency (ms), bare client vs the same client with the full stack, with the A/A noise floor',
    columns: [
      'Adapter',
      'Concurrency',
      'Bare calls/s median (min–max)',
      'Stack calls/s median (min–max)',
      'Stack / bare (median [min–max] of rounds)',
      'Bare / bare, A/A noise floor (median [min–max])',
      'Bare p99 ms',
      'Stack p99 ms',
      'p99 stack / bare',
    ],
    rows: results.map((r) => [
      r.adapter,
      String(r.concurrency),
      rateCell(r.rounds.bare?.throughput),
      rateCell(r.rounds.stack?.throughput),
      ratioCell(paired(r, 'stack', 'bare')),
      ratioCell(paired(r, 'bareAgain', 'bare')),
      p99Cell(r, 'bare'),
      p99Cell(r, 'stack'),
      fx(paired(r, 'stack', 'bare', 'p99')?.median),
    ]),
    ...(options.skipped.length ? { notes: options.skipped.map((s) => `not measured: ${s}`) } : {}),
  };
  const deadline: Table = {
    title: `Like for like: the stack against a bare client sending the same ${options.deadlineMs / 1000} s deadline, one row per such baseline (the "Baseline" column says whether it only sends the deadline or also enforces it, as the stack does)`,
    columns: [
      'Adapter',
      'Concurrency',
      'Baseline: bare client +',
      'Baseline calls/s median (min–max)',
      'Baseline / bare (median [min–max])',
      'Stack / baseline (median [min–max])',
      'Stack without its deadline / bare (median [min–max])',
      'Client heap bytes / call: baseline → stack',
    ],
    rows: results.flatMap((r) =>
      (options.baselines[r.adapter] ?? [])
        .filter((b) => r.rounds[b.variant])
        .map((b) => [
          r.adapter,
          String(r.concurrency),
          b.label,
          rateCell(r.rounds[b.variant]?.throughput),
          ratioCell(paired(r, b.variant, 'bare')),
          ratioCell(paired(r, 'stack', b.variant)),
          ratioCell(paired(r, 'stackNoDeadline', 'bare')),
          `${cpuCell(r, b.variant, 'clientBytes', 0)} → ${cpuCell(r, 'stack', 'clientBytes', 0)}`,
        ]),
    ),
  };
  const cpu: Table = {
    title:
      'CPU per call, µs (client process and server process), and the CPU capacity it leaves, bare vs stack (a second view of the same rounds)',
    columns: [
      'Adapter',
      'Concurrency',
      'Bare client',
      'Bare server',
      'Stack client',
      'Stack server',
      'Capacity stack / bare (median [min–max])',
      'Capacity, stack without its deadline / bare',
      'Capacity A/A (bare / bare)',
      'Client heap bytes / call: bare, bare + deadline, stack',
    ],
    rows: results.map((r) => [
      r.adapter,
      String(r.concurrency),
      cpuCell(r, 'bare', 'clientCpuUs'),
      cpuCell(r, 'bare', 'serverCpuUs'),
      cpuCell(r, 'stack', 'clientCpuUs'),
      cpuCell(r, 'stack', 'serverCpuUs'),
      ratioCell(capacity(r, 'stack', 'bare')),
      ratioCell(capacity(r, 'stackNoDeadline', 'bare')),
      ratioCell(capacity(r, 'bareAgain', 'bare')),
      `${cpuCell(r, 'bare', 'clientBytes', 0)}, ${cpuCell(r, 'bareDeadline', 'clientBytes', 0)}, ${cpuCell(r, 'stack', 'clientBytes', 0)}`,
    ]),
    notes: [
      "Client CPU is the lane process's user + system time over its round; server CPU is the server process's run time over the same round (all threads, /proc/<pid>/task/*/schedstat), each divided by the calls the round completed. Client heap bytes: what the lane process allocated on the JS heap over its round (the used heap's growth plus what each garbage collection freed, from V8's GCProfiler) per completed call, median of rounds; buffers' off-heap memory is not counted. Capacity = (bare client + server CPU per call) / (stack client + server CPU per call): the throughput ratio a CPU-bound client and server would reach. Stalls of the machine lengthen a round without adding CPU time, so this view moves less than throughput; it does not see waiting (timers, wake-ups) that costs no CPU.",
    ],
  };
  return [headline, deadline, cpu];
}
