/**
 * Settings of the recovery and soak suites from the command line. The runner
 * turns `--outages`, `--outage-mode`, `--rate`, `--repeat`, `--group` and `--duration`
 * into `BENCH_*` environment variables, which the suite's own process (a
 * child of the runner) inherits.
 */

/** How the outage-recovery suite runs. */
export interface OutageSettings {
  /** Outage lengths, seconds (`--outages 2,30`). */
  outagesS: number[];
  /** `unavailable`: servers answer UNAVAILABLE / 503; `stopped`: servers stop listening (`--outage-mode`). */
  mode: 'unavailable' | 'stopped';
  /** Calls per second per client, open loop (`--rate`). */
  rate: number;
  /** Runs per outage length; the tables show medians (`--repeat`). */
  repeat: number;
  /** Clients run side by side at a time, in table order (`--group`); undefined = all at once. */
  group: number | undefined;
  /** How long the load runs after recovery, ms. */
  recoveryMs: number;
}

function positive(name: string, raw: string): number {
  const n = Number(raw);
  if (!(Number.isFinite(n) && n > 0))
    throw new RangeError(`${name} must be a number > 0, got ${raw}`);
  return n;
}

/** The outage-recovery settings (`quick`: one 2 s outage at 100 calls/s). */
export function outageSettings(quick: boolean, env = process.env): OutageSettings {
  const outages = env.BENCH_OUTAGES ?? (quick ? '2' : '2,30');
  const mode = env.BENCH_OUTAGE_MODE ?? 'unavailable';
  if (mode !== 'unavailable' && mode !== 'stopped') {
    throw new RangeError(`--outage-mode must be unavailable or stopped, got ${mode}`);
  }
  return {
    outagesS: outages.split(',').map((s) => positive('--outages', s.trim())),
    mode,
    rate: positive('--rate', env.BENCH_RATE ?? (quick ? '100' : '200')),
    repeat: Math.round(positive('--repeat', env.BENCH_REPEAT ?? '1')),
    group:
      env.BENCH_GROUP === undefined ? undefined : Math.round(positive('--group', env.BENCH_GROUP)),
    recoveryMs: 10_000,
  };
}

/** Seconds each soak stack runs (`--duration`; default 10 minutes, 20 s quick). */
export function soakSeconds(quick: boolean, env = process.env): number {
  return positive('--duration', env.BENCH_SOAK_SECONDS ?? (quick ? '20' : '600'));
}
