import type { ScenarioPhase, ScenarioProgress } from '@breakwater/chaos';
import cliProgress from 'cli-progress';

/** Shows a run's progress: bars on a terminal, plain lines otherwise. */
export interface ProgressView {
  update(progress: ScenarioProgress): void;
  stop(): void;
}

const pct = (ok: number, all: number) =>
  all === 0 ? '   –  ' : `${((ok / all) * 100).toFixed(1)}%`.padStart(6);

/** Width of the text after a bar: `ok 100.0% failed 12345 busy 123` / `  6.0 s  recovery`. */
const INFO_WIDTH = 31;

/**
 * How wide the label and the bar can be so that `label bar info` fits in
 * `columns` (minus one, so the terminal never wraps): the bar shrinks first
 * (down to 10), then the label is cut.
 */
export function barLayout(
  columns: number,
  labels: readonly string[],
): { labelWidth: number; barsize: number } {
  const room = Math.max(40, columns) - 1 - INFO_WIDTH - 2;
  const longest = Math.max(...labels.map((l) => l.length));
  const barsize = Math.max(10, Math.min(28, room - longest));
  return { labelWidth: Math.min(longest, room - barsize), barsize };
}

const fit = (text: string, width: number) =>
  text.length <= width ? text.padEnd(width) : `${text.slice(0, width - 1)}…`;

/**
 * Progress bars (cli-progress): one per phase of the timeline, one per client
 * with its live success rate and calls in flight, sized to fit `columns`.
 */
export function barsView(
  phases: readonly ScenarioPhase[],
  clients: readonly string[],
  expectedCalls: number,
  columns = 80,
): ProgressView {
  const { labelWidth: width, barsize } = barLayout(columns, [
    ...phases.map((p) => p.name),
    ...clients,
  ]);
  const multibar = new cliProgress.MultiBar(
    {
      format: '{label} {bar} {info}',
      barsize,
      hideCursor: true,
      clearOnComplete: false,
      autopadding: true,
      fps: 8,
    },
    cliProgress.Presets.shades_classic,
  );
  const phaseBars = phases.map((p) =>
    multibar.create(Math.max(1, Math.round(p.durationMs / 100)), 0, {
      label: fit(p.name, width),
      info: `${(p.durationMs / 1000).toFixed(1).padStart(5)} s  ${p.kind ?? 'healthy'}`,
    }),
  );
  const clientBars = clients.map((c) =>
    multibar.create(expectedCalls, 0, { label: fit(c, width), info: '' }),
  );
  let offset = 0;
  const starts = phases.map((p) => {
    const s = offset;
    offset += p.durationMs;
    return s;
  });
  return {
    update(progress) {
      phases.forEach((p, i) => {
        const done = Math.min(p.durationMs, Math.max(0, progress.elapsedMs - (starts[i] ?? 0)));
        phaseBars[i]?.update(Math.round(done / 100));
      });
      progress.clients.forEach((c, i) => {
        clientBars[i]?.update(c.offered, {
          info: `ok ${pct(c.succeeded, c.succeeded + c.failed)} failed ${String(c.failed).padStart(5)} busy ${String(c.inFlight).padStart(3)}`,
        });
      });
    },
    stop: () => multibar.stop(),
  };
}

/**
 * Plain lines for logs and CI: one when a phase starts, and every `everyMs`
 * one line per protocol with each client's success rate so far (short enough
 * for 80 columns).
 */
export function linesView(log: (line: string) => void, everyMs = 5_000): ProgressView {
  let phase = -1;
  let lastLine = 0;
  return {
    update(progress) {
      const at = `[${(progress.elapsedMs / 1000).toFixed(1).padStart(5)} s]`;
      if (progress.phaseIndex !== phase) {
        phase = progress.phaseIndex;
        log(`${at} phase: ${progress.phase}`);
      }
      if (progress.elapsedMs - lastLine >= everyMs) {
        lastLine = progress.elapsedMs;
        const byProtocol = new Map<string, string[]>();
        for (const c of progress.clients) {
          const [protocol = '', flavour = c.client] = c.client.split('/');
          const list = byProtocol.get(protocol) ?? [];
          list.push(`${flavour} ${pct(c.succeeded, c.succeeded + c.failed).trim()}`);
          byProtocol.set(protocol, list);
        }
        for (const [protocol, parts] of byProtocol)
          log(`${at} ${protocol} ok: ${parts.join('  ')}`);
      }
    },
    stop() {},
  };
}
