import { type Clock, type Sleep, systemClock, systemSleep } from '@breakwater/core/time';
import { checkRange } from './check.js';

/** What a phase means for the report: which numbers are judged against it. */
export type PhaseKind = 'healthy' | 'fault' | 'outage' | 'recovery';

/** One step of a scenario's timeline. */
export interface ScenarioPhase {
  /** Short name shown in progress output and reports. */
  name: string;
  /** How long the phase lasts, in ms. */
  durationMs: number;
  /** `fault` and `outage` phases are the "fault phases" of a report; `recovery` measures the return. Defaults to `'healthy'`. */
  kind?: PhaseKind;
  /** Replicas brought back by this phase; a report times how long until each client is served by one of them again. Defaults to none. */
  restores?: readonly string[];
  /**
   * Least time the phase lasts after its `enter` finished, in ms: a restart
   * that takes longer than planned still leaves this much time to watch the
   * recovery (later phases move back). Defaults to 0.
   */
  holdMs?: number;
  /** Acts on the servers when the phase starts (set faults, kill, restart). Defaults to nothing. */
  enter?: () => unknown;
}

/** When a phase actually ran (epoch ms). */
export interface PhaseWindow {
  /** The phase's name. */
  name: string;
  /** The phase's kind (`'healthy'` when it set none). */
  kind: PhaseKind;
  /** The phase's `restores`, when it set them. */
  restores: readonly string[] | undefined;
  /** When the phase started, before its `enter` ran. */
  start: number;
  /** When the phase's `enter` had finished (e.g. a restarted replica listens again). */
  readyAt: number;
  /** When the phase ended (early, if the timeline's signal aborted). */
  end: number;
}

/** Options of {@link runTimeline}. */
export interface TimelineOptions {
  /** The phases, run in order. */
  phases: readonly ScenarioPhase[];
  /** Called as each phase starts, before its `enter`. Defaults to nothing. */
  onPhase?: (phase: ScenarioPhase, index: number) => void;
  /** Ends the timeline early (the current phase is cut short). Defaults to none. */
  signal?: AbortSignal;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
  /** Waits out each phase. Defaults to `systemSleep`. */
  sleep?: Sleep;
}

/** Total duration of `phases` in ms. */
export function timelineDuration(phases: readonly ScenarioPhase[]): number {
  return phases.reduce((sum, p) => sum + p.durationMs, 0);
}

/** Validates phases, naming the bad field. @internal */
export function checkPhases(phases: readonly ScenarioPhase[]): void {
  if (!Array.isArray(phases) || phases.length === 0) {
    throw new TypeError('phases must be a non-empty array');
  }
  phases.forEach((p, i) => {
    if (typeof p?.name !== 'string') throw new TypeError(`phases[${i}].name must be a string`);
    checkRange(`phases[${i}].durationMs`, p.durationMs, 0);
    if (p.holdMs !== undefined) checkRange(`phases[${i}].holdMs`, p.holdMs, 0);
  });
}

/**
 * Runs a timeline of phases: each phase's `enter` runs at its scheduled
 * start (boundaries are fixed from the first start, so a slow `enter` does
 * not push later phases back — unless the phase's `holdMs` after `enter`
 * needs more time), then the timeline waits until the phase's end. Rejects
 * if an `enter` throws. Resolves with when each phase ran.
 */
export async function runTimeline(options: TimelineOptions): Promise<PhaseWindow[]> {
  checkPhases(options.phases);
  const clock = options.clock ?? systemClock;
  const sleep = options.sleep ?? systemSleep;
  const t0 = clock();
  const windows: PhaseWindow[] = [];
  let boundary = t0;
  for (const [index, phase] of options.phases.entries()) {
    if (options.signal?.aborted) break;
    const start = clock();
    boundary += phase.durationMs;
    options.onPhase?.(phase, index);
    await phase.enter?.();
    const readyAt = clock();
    boundary = Math.max(boundary, readyAt + (phase.holdMs ?? 0));
    const left = boundary - clock();
    if (left > 0) await sleep(left, options.signal);
    windows.push({
      name: phase.name,
      kind: phase.kind ?? 'healthy',
      restores: phase.restores,
      start,
      readyAt,
      end: clock(),
    });
  }
  return windows;
}
