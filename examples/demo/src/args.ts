import { parseArgs } from 'node:util';
import { SCENARIOS, type ScenarioName } from './scenarios.js';

/** What one demo run does. */
export interface DemoOptions {
  /** Length of the scenario timeline in seconds. */
  durationS: number;
  /** Calls started per second by each client (open loop). */
  rate: number;
  /** Which timeline to run. */
  scenario: ScenarioName;
  /** Where the HTML report goes. */
  out: string;
  /** Live progress bars (else plain lines); defaults to whether stdout is a TTY. */
  progress: boolean;
  /** Write the report's JSON next to it as well. */
  json: boolean;
  /** Width of the terminal output (tables, bars, notes) in characters. */
  columns: number;
}

export const USAGE = `Usage: pnpm demo [--quick] [--duration <s>] [--rate <per s>] [--scenario <name>] [--out <file>]

  --quick            a short run (about 8 s of load) with the same phases
  --duration <s>     length of the timeline in seconds (default 26)
  --rate <n>         calls per second started by each client (default 25; 6 clients in all)
  --scenario <name>  ${Object.keys(SCENARIOS).join(' | ')} (default "default")
  --out <file>       HTML report path (default ./demo-report.html)
  --json             also write the report data as <out>.json
  --no-progress      plain log lines instead of progress bars`;

/**
 * Parses `argv` (without node and script); throws a `TypeError` naming a bad
 * option. `columns` is the terminal's width (80 when stdout is not a terminal).
 */
export function parseDemoArgs(
  argv: readonly string[],
  isTTY: boolean,
  columns = 80,
): DemoOptions | 'help' {
  const { values } = parseArgs({
    // `pnpm demo -- --scenario outage` hands the script the `--` too (pnpm passes it on):
    // it separates pnpm's options from the script's, so it is not one of ours.
    args: argv.filter((a) => a !== '--'),
    options: {
      quick: { type: 'boolean', default: false },
      duration: { type: 'string' },
      rate: { type: 'string' },
      scenario: { type: 'string', default: 'default' },
      out: { type: 'string', default: 'demo-report.html' },
      json: { type: 'boolean', default: false },
      progress: { type: 'boolean' },
      'no-progress': { type: 'boolean' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: false,
  });
  if (values.help) return 'help';
  const number = (name: string, raw: string | undefined, fallback: number, min: number) => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min) {
      throw new TypeError(`--${name} must be a number >= ${min}, got ${JSON.stringify(raw)}`);
    }
    return n;
  };
  const scenario = values.scenario as string;
  if (!(scenario in SCENARIOS)) {
    throw new TypeError(
      `--scenario must be one of ${Object.keys(SCENARIOS).join(', ')}, got ${JSON.stringify(scenario)}`,
    );
  }
  return {
    durationS: number('duration', values.duration, values.quick ? 8 : 26, 2),
    rate: number('rate', values.rate, values.quick ? 20 : 25, 1),
    scenario: scenario as ScenarioName,
    out: values.out as string,
    json: values.json === true,
    progress: values['no-progress'] ? false : (values.progress ?? isTTY),
    // Below 60 columns nothing lines up anyway; wrap as if there were 60.
    columns: Math.max(60, Math.floor(columns)),
  };
}
