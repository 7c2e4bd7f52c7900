import type { ScenarioPhase, ScenarioProgress } from '@breakwater/chaos';
import cliProgress from 'cli-progress';

/** Shows a run's progress: bars on a terminal, plain lines otherwise. */
export interface ProgressView {
  update(progress: ScenarioProgress): void;
  stop(): void;
}

const pct = (ok: number, all: number) =>
  all === 0 ? '   –  ' : `${((ok / all) * 100).toFixed(1)}%`.padStart(6);

/**
 * Progress bars (cli-progress): one per phase of the timeline, one per client
 * with its live success rate and calls in flight.
 */
export function barsView(
  phases: readonly ScenarioPhase[],
  clients: readonly string[],
  expectedCalls: number,
): ProgressView {
  const width = Math.max(...phases.map((p) => p.name.length), ...clients.map((c) => c.length));
  const multibar = new cliProgress.MultiBar(
    {
      format: '{label} {bar} {info}',
      barsize: 28,
      hideCursor: true,
      clearOnComplete: false,
      autopadding: true,
      fps: 8,
    },
    cliProgress.Presets.shades_classic,
  );
  const phaseBars = phases.map((p) =>
    multibar.create(Math.max(1, Math.round(p.durationMs / 100)), 0, {
      label: p.name.padEnd(width),
      info: `${(p.durationMs / 1000).toFixed(1)} s  ${p.kind ?? 'healthy'}`,
    }),
  );
  const clientBars = clients.map((c) =>
    multibar.create(expectedCalls, 0, { label: c.padEnd(width), info: '' }),
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
          info: `ok ${pct(c.succeeded, c.succeeded + c.failed)}  failed ${String(c.failed).padStart(5)}  in flight ${String(c.inFlight).padStart(3)}`,
        });
      });
    },
    stop: () => multibar.stop(),
  };
}

/** Plain lines for logs and CI: one when a phase starts, one summary line every `everyMs`. */
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
        log(
          `${at} ${progress.clients
            .map((c) => `${c.client} ${pct(c.succeeded, c.succeeded + c.failed).trim()}`)
            .join('  ')}`,
        );
      }
    },
    stop() {},
  };
}
