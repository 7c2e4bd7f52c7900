/**
 * The otel-cost suite's settings (from the runner's flags) and its tables and
 * targets, built from the per-round CPU figures of its variants.
 */
import { median, pairedDifferences } from '@breakwater/chaos';
import { fmt, type Table, type TargetResult } from './report.js';

/** The variants, by name. */
export const OTEL_VARIANTS = {
  off: 'telemetry off',
  sdk: 'otelTelemetry(), SDK MeterProvider',
  noop: 'otelTelemetry(), no-op meter',
} as const;

/** How the otel-cost suite runs. */
export interface OtelCostSettings {
  /** Interleaved rounds (`--otel-rounds`). */
  rounds: number;
  /** Calls per batch (`--otel-calls`); `undefined`: calibrated. */
  calls: number | undefined;
  /** Also run the SDK variants (`--own-only` turns this off). */
  withSdk: boolean;
}

function positiveInteger(flag: string, raw: string): number {
  const n = Number(raw);
  if (!(Number.isInteger(n) && n > 0))
    throw new RangeError(`${flag} must be an integer > 0, got ${raw}`);
  return n;
}

/** The settings from the runner's `BENCH_OTEL_*` variables (`quick`: 5 rounds). */
export function otelCostSettings(
  quick: boolean,
  env: Readonly<Record<string, string | undefined>> = process.env,
): OtelCostSettings {
  return {
    rounds: positiveInteger('--otel-rounds', env.BENCH_OTEL_ROUNDS ?? (quick ? '5' : '15')),
    calls:
      env.BENCH_OTEL_CALLS === undefined
        ? undefined
        : positiveInteger('--otel-calls', env.BENCH_OTEL_CALLS),
    withSdk: env.BENCH_OTEL_OWN_ONLY !== '1',
  };
}

/** What the suite measured: CPU ns per call of each variant per round, and bytes per call. */
export interface OtelCostData {
  /** Variant name → CPU ns per call, one figure per round, in round order. */
  rounds: Record<string, number[]>;
  /** Variant name → bytes allocated per call (`undefined` without `--expose-gc`). */
  bytes: Record<string, number | undefined>;
}

/** The issue-20 budget for the package's own work per successful call, ns. */
export const OWN_NS_TARGET = 150;
/**
 * Bytes per call below which "no allocation" holds: the smallest V8 heap
 * object (a boxed number) is 12 B, so a smaller difference is the heap
 * reading's noise.
 */
export const OWN_BYTES_NOISE = 12;

const range = (xs: readonly number[]) => `${fmt(Math.min(...xs), 0)}–${fmt(Math.max(...xs), 0)}`;

/** The variant table, the paired differences and the issue-20 targets. */
export function otelCostReport(data: OtelCostData): { tables: Table[]; targets: TargetResult[] } {
  const present = Object.keys(data.rounds);
  const bytes = (name: string) => data.bytes[name];
  const variants: Table = {
    title: 'protect with and without telemetry: CPU ns per successful call',
    columns: ['Variant', 'CPU ns/call (median)', 'min–max', 'bytes/call'],
    rows: present.map((name) => {
      const xs = data.rounds[name] as number[];
      return [name, fmt(median(xs), 0), range(xs), fmt(bytes(name), 0)];
    }),
  };
  const differences: Array<[string, string, string]> = [
    ['otel with the SDK, less telemetry off', OTEL_VARIANTS.sdk, OTEL_VARIANTS.off],
    [
      'the package’s own share: no-op meter, less telemetry off',
      OTEL_VARIANTS.noop,
      OTEL_VARIANTS.off,
    ],
  ];
  const rows: string[][] = [];
  const delta = (a: string, b: string) => {
    const xa = data.rounds[a];
    const xb = data.rounds[b];
    return xa && xb ? pairedDifferences(xa, xb) : undefined;
  };
  const bytesDelta = (a: string, b: string) => {
    const ba = bytes(a);
    const bb = bytes(b);
    return ba === undefined || bb === undefined ? undefined : ba - bb;
  };
  for (const [label, a, b] of differences) {
    const d = delta(a, b);
    if (d) rows.push([label, fmt(median(d), 0), range(d), fmt(bytesDelta(a, b), 0)]);
  }
  const own = delta(OTEL_VARIANTS.noop, OTEL_VARIANTS.off);
  const tables: Table[] = [
    variants,
    {
      title: 'Added per call, paired round by round',
      columns: ['Difference', 'CPU ns/call (median)', 'min–max', 'bytes/call'],
      rows,
    },
  ];
  const targets: TargetResult[] = [];
  if (own) {
    const m = median(own);
    targets.push({
      target: `otelTelemetry() adds ≤ ${OWN_NS_TARGET} ns per successful call beyond the SDK’s own work (issue 20)`,
      figure: `${fmt(m, 0)} ns (rounds ${range(own)})`,
      met: m <= OWN_NS_TARGET,
      note:
        m <= OWN_NS_TARGET
          ? 'the no-op meter variant less telemetry off'
          : `over by ${fmt(m - OWN_NS_TARGET, 0)} ns (the no-op meter variant less telemetry off)`,
    });
    const b = bytesDelta(OTEL_VARIANTS.noop, OTEL_VARIANTS.off);
    targets.push({
      target: 'otelTelemetry(): no per-call allocation beyond the SDK’s own (issue 20)',
      figure: b === undefined ? 'not measured' : `${b >= 0 ? '+' : ''}${fmt(b, 0)} B per call`,
      met: b === undefined ? null : b < OWN_BYTES_NOISE,
      note:
        b === undefined
          ? 'run with node --expose-gc'
          : `no-op meter less telemetry off; under ${OWN_BYTES_NOISE} B (one boxed number) counts as none`,
    });
  }
  return { tables, targets };
}
