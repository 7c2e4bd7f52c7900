/**
 * The runner's command line: which suites run, and the suite settings that
 * travel to each suite's own process as `BENCH_*` environment variables.
 * Every flag is listed here with the suites that read it; anything else is
 * refused, and so is a setting none of the selected suites reads (it would
 * otherwise be ignored without a word).
 */
/** A command line the runner refuses (printed without a stack). */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A suite setting on the command line. */
export interface SettingFlag {
  /** The flag, e.g. `--keyed`. */
  flag: string;
  /** The environment variable the suite's process reads it from. */
  env: string;
  /** `value`: takes a value; `switch`: no value (`1` when given). */
  kind: 'value' | 'switch';
  /** The suites that read it. */
  suites: readonly string[];
  /** One line for `--list`. */
  help: string;
}

const OUTAGE_RECOVERY = ['outage-recovery'];
const SOAK = ['soak'];
const OTEL = ['otel-cost'];

/** Every suite setting the runner knows. */
export const SETTING_FLAGS: readonly SettingFlag[] = [
  {
    flag: '--outages',
    env: 'BENCH_OUTAGES',
    kind: 'value',
    suites: OUTAGE_RECOVERY,
    help: 'outage lengths, s (e.g. 2,30)',
  },
  {
    flag: '--outage-mode',
    env: 'BENCH_OUTAGE_MODE',
    kind: 'value',
    suites: OUTAGE_RECOVERY,
    help: 'unavailable | stopped',
  },
  {
    flag: '--rate',
    env: 'BENCH_RATE',
    kind: 'value',
    suites: OUTAGE_RECOVERY,
    help: 'calls/s per client',
  },
  {
    flag: '--repeat',
    env: 'BENCH_REPEAT',
    kind: 'value',
    suites: OUTAGE_RECOVERY,
    help: 'runs per outage length',
  },
  {
    flag: '--group',
    env: 'BENCH_GROUP',
    kind: 'value',
    suites: OUTAGE_RECOVERY,
    help: 'clients at a time',
  },
  {
    flag: '--duration',
    env: 'BENCH_SOAK_SECONDS',
    kind: 'value',
    suites: SOAK,
    help: 's per stack',
  },
  {
    flag: '--stacks',
    env: 'BENCH_SOAK_STACKS',
    kind: 'value',
    suites: SOAK,
    help: 'only the stacks whose name contains one of these substrings',
  },
  {
    flag: '--parallel',
    env: 'BENCH_SOAK_PARALLEL',
    kind: 'value',
    suites: SOAK,
    help: 'stacks split across N child processes run at once',
  },
  {
    flag: '--otel-rounds',
    env: 'BENCH_OTEL_ROUNDS',
    kind: 'value',
    suites: OTEL,
    help: 'interleaved rounds (default 15, quick 5)',
  },
  {
    flag: '--otel-calls',
    env: 'BENCH_OTEL_CALLS',
    kind: 'value',
    suites: OTEL,
    help: 'calls per batch (default: calibrated to ~20 ms of CPU)',
  },
  {
    flag: '--own-only',
    env: 'BENCH_OTEL_OWN_ONLY',
    kind: 'switch',
    suites: OTEL,
    help: 'leave the SDK variants out (more rounds of the package’s own share in the same time)',
  },
  {
    flag: '--scenarios',
    env: 'BENCH_PARTIAL_SCENARIOS',
    kind: 'value',
    suites: ['partial'],
    help: 'only the scenarios whose name contains one of these substrings (comma-separated)',
  },
  {
    flag: '--keyed',
    env: 'BENCH_REDIS_KEYED',
    kind: 'switch',
    suites: ['redis-fleet'],
    help: 'only the keyed limiter’s accuracy rows',
  },
];

/** What the command line asks for. */
export interface Args {
  /** The suites to run; `undefined`: all. */
  only: string[] | undefined;
  quick: boolean;
  list: boolean;
  /** Rewrite BENCHMARKS.md's generated section from summary.json; run nothing. */
  render: boolean;
  /** Internal: run this one suite in this process and write its result to `out`. */
  child: { suite: string; out: string } | undefined;
  /** Environment variables for the suites' processes, from the setting flags given. */
  settings: Record<string, string>;
}

/** The suites the runner knows and the `BENCH_ONLY` / `BENCH_QUICK` fallbacks. */
export interface ArgsContext {
  /** Every suite name, in run order. */
  suites: readonly string[];
  env?: Readonly<Record<string, string | undefined>>;
}

const RUNNER_SWITCHES = ['--quick', '--list', '--render'];

/** The flags the runner knows, for error messages. */
export function knownFlags(): string[] {
  return ['--only', ...RUNNER_SWITCHES, ...SETTING_FLAGS.map((f) => f.flag)];
}

/**
 * Parses the runner's arguments (`--flag value` or `--flag=value`). Throws an
 * `Error` naming the argument for an unknown flag, a stray argument, a
 * missing value, an unknown suite, or a setting that no selected suite reads.
 */
export function parseArgs(argv: readonly string[], context: ArgsContext): Args {
  const env = context.env ?? {};
  const args = argv.filter((a) => a !== '--');
  const c = args.indexOf('--child');
  if (c >= 0) {
    // The runner's own call: settings already travel in the environment.
    const suite = args[c + 1];
    const out = args[c + 2];
    if (!suite || !out) throw new UsageError('--child needs a suite and an output file');
    return {
      child: { suite, out },
      only: [suite],
      quick: args.includes('--quick'),
      list: false,
      render: false,
      settings: {},
    };
  }
  let only: string[] | undefined;
  let quick = env.BENCH_QUICK === '1';
  let list = false;
  let render = false;
  const settings: Record<string, string> = {};
  const given: SettingFlag[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith('--')) {
      throw new UsageError(
        `unexpected argument ${JSON.stringify(arg)} (choose suites with --only <name>[,<name>])`,
      );
    }
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    const inline = eq >= 0 ? arg.slice(eq + 1) : undefined;
    const takeValue = (): string => {
      let value = inline;
      if (value === undefined) {
        const next = args[i + 1];
        if (next !== undefined && !next.startsWith('--')) {
          value = next;
          i++;
        }
      }
      if (!value) throw new UsageError(`${name} needs a value`);
      return value;
    };
    if (RUNNER_SWITCHES.includes(name)) {
      if (inline !== undefined) throw new UsageError(`${name} takes no value, got ${arg}`);
      if (name === '--quick') quick = true;
      else if (name === '--list') list = true;
      else render = true;
      continue;
    }
    if (name === '--only') {
      only = takeValue()
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      continue;
    }
    const setting = SETTING_FLAGS.find((f) => f.flag === name);
    if (!setting) {
      throw new UsageError(`unknown flag ${name}; the runner knows ${knownFlags().join(', ')}`);
    }
    if (setting.kind === 'switch') {
      if (inline !== undefined) throw new UsageError(`${name} takes no value, got ${arg}`);
      settings[setting.env] = '1';
    } else {
      settings[setting.env] = takeValue();
    }
    given.push(setting);
  }
  only ??= env.BENCH_ONLY ? env.BENCH_ONLY.split(',').map((s) => s.trim()) : undefined;
  const unknown = only?.filter((n) => !context.suites.includes(n)) ?? [];
  if (unknown.length > 0) {
    throw new UsageError(
      `unknown suite ${unknown.join(', ')}; known: ${context.suites.join(', ')}`,
    );
  }
  const selected = only ?? context.suites;
  for (const s of given) {
    if (!s.suites.some((name) => selected.includes(name))) {
      throw new UsageError(
        `${s.flag} is read by ${s.suites.join(', ')} only, which this run does not include (--only ${selected.join(',')})`,
      );
    }
  }
  return { only, quick, list, render, child: undefined, settings };
}
