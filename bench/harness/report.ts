/**
 * What a suite hands back, and how it becomes Markdown. Suites return plain
 * data (tables, targets and notes in `bench/results/summary.json`, raw figures
 * in the gitignored `bench/results/raw.json`); rendering happens here only.
 */
import { UsageError } from './args.js';

/** A table as rows of already formatted cells. */
export interface Table {
  title: string;
  columns: string[];
  rows: string[][];
  /** Lines printed under the table. */
  notes?: string[];
}

/** One line of the targets table. */
export interface TargetResult {
  /** What is promised, e.g. "protect ≥ 10x faster than cockatiel". */
  target: string;
  /** The measured figure, formatted. */
  figure: string;
  /** `true` met, `false` missed, `null` not measured. */
  met: boolean | null;
  /** By how much it was missed and what limits it, or why it was not measured. */
  note?: string;
}

/** Result of one suite. */
export interface SuiteResult {
  name: string;
  title: string;
  /** ISO date the suite ran. */
  ranAt: string;
  /** Wall time of the suite, seconds. */
  seconds: number;
  tables: Table[];
  targets: TargetResult[];
  /** Free text under the suite's heading (method, configuration). */
  notes: string[];
  /** Raw figures for anyone who wants to recompute. */
  data: unknown;
  /** Why the suite did not run (e.g. a program it needs is missing); absent when it ran. */
  skipped?: string;
}

/** A suite the runner can start. */
export interface Suite {
  name: string;
  title: string;
  run(options: {
    quick: boolean;
  }): Promise<Omit<SuiteResult, 'name' | 'title' | 'ranAt' | 'seconds'>>;
  /**
   * Why the suite cannot run on this machine, or `undefined` when it can.
   * A plain `pnpm bench` then skips it and says so; `--only` naming it fails.
   */
  unavailable?(): string | undefined;
  /**
   * Reads and checks the suite's settings (throws on a bad one); the runner
   * calls it before any suite runs, so a typo fails at once, not after an hour.
   */
  checkSettings?(quick: boolean): void;
}

/**
 * The selected suites that cannot run here, with the reason. When the
 * command line named them (`--only`), that is an error (a "skipped" would
 * replace their last results and measure nothing); a plain run skips them.
 */
export function unavailableSuites(
  selected: readonly Pick<Suite, 'name' | 'unavailable'>[],
  named: boolean,
): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of selected) {
    const why = s.unavailable?.();
    if (why) out.set(s.name, why);
  }
  if (named && out.size > 0) {
    throw new UsageError([...out].map(([name, why]) => `cannot run ${name}: ${why}`).join('; '));
  }
  return out;
}

/**
 * What a suite that did not run reports: the reason, under its heading, in
 * the targets table (its targets were not measured) and in `skipped`.
 */
export function skippedResult(
  name: string,
  reason: string,
): Omit<SuiteResult, 'name' | 'title' | 'ranAt' | 'seconds'> {
  return {
    tables: [],
    targets: [
      { target: `every target of ${name}`, figure: '–', met: null, note: `skipped: ${reason}` },
    ],
    notes: [`**Skipped:** ${reason}.`],
    data: null,
    skipped: reason,
  };
}

/** Formats a number with `digits` decimals, or "–" when missing/not finite. */
export function fmt(value: number | undefined, digits = 1): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  return value.toFixed(digits);
}

/** Formats a ratio as "1.23x". */
export function fx(value: number | undefined, digits = 2): string {
  return value === undefined || !Number.isFinite(value) ? '–' : `${value.toFixed(digits)}x`;
}

/** Formats a fraction as a percentage. */
export function pct(value: number | undefined, digits = 1): string {
  return value === undefined || !Number.isFinite(value) ? '–' : `${(value * 100).toFixed(digits)}%`;
}

/** Renders one table as GitHub Markdown. */
export function tableMarkdown(table: Table): string {
  const esc = (s: string) => s.replaceAll('|', '\\|');
  const lines = [
    `**${table.title}**`,
    '',
    `| ${table.columns.map(esc).join(' | ')} |`,
    `| ${table.columns.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`,
    ...table.rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ];
  if (table.notes?.length) lines.push('', ...table.notes.map((n) => `_${n}_`));
  return lines.join('\n');
}

/** Renders the targets of every suite as one table. */
export function targetsMarkdown(targets: TargetResult[]): string {
  const mark = (m: boolean | null) => (m === null ? 'not measured' : m ? '**met**' : '**not met**');
  return tableMarkdown({
    title: 'Targets',
    columns: ['Target', 'Measured', 'Status', 'Note'],
    rows: targets.map((t) => [t.target, t.figure, mark(t.met), t.note ?? '']),
  });
}

/**
 * The suites without their raw figures (`data`): what `summary.json` keeps and
 * BENCHMARKS.md is rendered from.
 */
export function withoutRawData<S extends { data?: unknown }>(
  suites: Readonly<Record<string, S>>,
): Record<string, Omit<S, 'data'>> {
  const out: Record<string, Omit<S, 'data'>> = {};
  for (const [name, { data: _raw, ...rest }] of Object.entries(suites)) out[name] = rest;
  return out;
}
