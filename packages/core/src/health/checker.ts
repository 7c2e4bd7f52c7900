import { DeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { OperationAbortedError } from '../errors/operation-aborted-error.js';
import { type Event, EventEmitter } from '../internal/events.js';
import { saneClock } from '../internal/sane-clock.js';
import {
  checkFunction,
  checkNumber,
  checkObject,
  checkOptions,
  type KnownKeys,
  optionPath,
} from '../internal/validate.js';
import type { Clock } from '../time/clock.js';
import { backgroundSleep, type Sleep } from '../time/sleep.js';
import { type HealthVerdict, type ProbeSetting, runProbe } from './probe.js';
import type { HealthRecorder } from './registry.js';
import { type HealthTargets, normalizeTargets } from './targets.js';

/** Options of {@link createHealthChecker}. */
export interface HealthCheckerOptions<T = string> {
  /** Where outcomes are recorded: `success(name, ms)` / `failure(name)`. */
  registry: HealthRecorder;
  /** What to probe: `{ name: target }` or `[{ name, target }]`. Names are registry names. */
  targets: HealthTargets<T>;
  /** The probe, or `'none'` (nothing is checked or recorded; no timer runs). */
  probe: ProbeSetting<T>;
  /** Time from the start of one round to the start of the next, in ms (> 0). */
  intervalMs: number;
  /** A probe still running after this many ms is aborted and recorded as a failure (> 0). */
  timeoutMs: number;
  /**
   * Record passing probes with `{ keepStreak: true }`, so only a confirmed real
   * call (`settle`) resets the failure streak. Defaults to false.
   */
  keepStreak?: boolean;
  /** Time source for latency. Defaults to `systemClock`. */
  clock?: Clock;
  /** Waits between rounds and for probe timeouts. Defaults to an `unref`'d host timer. */
  sleep?: Sleep;
}

/** Keys of {@link HealthCheckerOptions}. @internal */
export const HEALTH_CHECKER_KEYS = {
  registry: true,
  targets: true,
  probe: true,
  intervalMs: true,
  timeoutMs: true,
  keepStreak: true,
  clock: true,
  sleep: true,
} as const satisfies KnownKeys<HealthCheckerOptions>;

/** One recorded probe outcome. Carries the provider name, a reason and timing only. */
export interface ProbeResultEvent {
  /** Registry name of the probed provider. */
  provider: string;
  /** Whether the probe passed. */
  healthy: boolean;
  /** Human-readable reason from the probe (or the timeout). */
  reason: string;
  /** How long the probe took, in clock ms. */
  durationMs: number;
}

/** A running background health checker. */
export interface HealthChecker {
  /** Probes every target now; targets with a probe in flight join it. Resolves with what was recorded. */
  checkNow(): Promise<ProbeResultEvent[]>;
  /** Stops probing: aborts probes in flight (they record nothing) and clears every timer. */
  stop(): void;
  /** False once stopped (or when the probe is `'none'`). */
  readonly running: boolean;
  /** Subscribes to recorded probe outcomes. */
  readonly onProbeResult: Event<ProbeResultEvent>;
}

const TIMED_OUT: unique symbol = Symbol('timed out');

/**
 * Probes `targets` in the background — the first round at once, then every
 * `intervalMs` — and records each outcome with its latency into `registry`.
 * A probe that exceeds `timeoutMs` is a failure; a probe cut by `stop()`
 * records nothing. Rounds never overlap.
 * @example
 * const checker = createHealthChecker({ registry, targets: { a: 'http://a/healthz' },
 *   probe: httpProbe, intervalMs: 5000, timeoutMs: 2000 });
 * // later
 * checker.stop();
 */
export function createHealthChecker<T = string>(options: HealthCheckerOptions<T>): HealthChecker {
  checkOptions('createHealthChecker', options, HEALTH_CHECKER_KEYS, '', false);
  const { registry, probe } = options;
  checkObject('registry', registry, false);
  checkFunction('registry.success', registry.success, false);
  checkFunction('registry.failure', registry.failure, false);
  if (probe !== 'none') checkFunction('probe', probe, false);
  const targets = optionPath('', () => normalizeTargets(options.targets), 'createHealthChecker');
  const intervalMs = checkNumber('intervalMs', options.intervalMs, { above: 0 });
  const timeoutMs = checkNumber('timeoutMs', options.timeoutMs, { above: 0 });
  checkFunction('clock', options.clock);
  checkFunction('sleep', options.sleep);
  const clock = saneClock(options.clock);
  const sleep = options.sleep ?? backgroundSleep;
  const keepStreak = options.keepStreak === true;

  const emitter = new EventEmitter<ProbeResultEvent>();
  const stopper = new AbortController();
  const inFlight = new Map<string, Promise<ProbeResultEvent | undefined>>();
  let stopped = probe === 'none';

  const record = (provider: string, verdict: HealthVerdict, durationMs: number) => {
    if (verdict.healthy)
      registry.success(provider, durationMs, keepStreak ? { keepStreak } : undefined);
    else registry.failure(provider);
    const event = { provider, healthy: verdict.healthy, reason: verdict.reason, durationMs };
    emitter.emit(event);
    return event;
  };

  const probeOnce = async (provider: string, target: T, run: Exclude<ProbeSetting<T>, 'none'>) => {
    const probeAbort = new AbortController();
    // Separate from the probe's signal so a finished probe can release its timeout sleep.
    const timerAbort = new AbortController();
    const onStop = () => {
      probeAbort.abort(new OperationAbortedError({ message: 'Health checker stopped' }));
      timerAbort.abort();
    };
    stopper.signal.addEventListener('abort', onStop, { once: true });
    const started = clock();
    try {
      const outcome = await Promise.race([
        runProbe(run, target, { provider, signal: probeAbort.signal }),
        sleep(timeoutMs, timerAbort.signal).then((): typeof TIMED_OUT => TIMED_OUT),
      ]);
      if (stopped) return undefined;
      if (outcome === TIMED_OUT) {
        probeAbort.abort(new DeadlineExceededError(timeoutMs));
        const reason = `probe timed out after ${timeoutMs} ms`;
        return record(provider, { healthy: false, reason }, clock() - started);
      }
      return record(provider, outcome, clock() - started);
    } catch {
      // Only a cut probe rejects here (runProbe turns probe errors into verdicts).
      return undefined;
    } finally {
      timerAbort.abort();
      stopper.signal.removeEventListener('abort', onStop);
    }
  };

  const probeTarget = (provider: string, target: T) => {
    const existing = inFlight.get(provider);
    if (existing) return existing;
    if (stopped || probe === 'none') return Promise.resolve(undefined);
    const p = probeOnce(provider, target, probe).finally(() => inFlight.delete(provider));
    inFlight.set(provider, p);
    return p;
  };

  const round = async (): Promise<ProbeResultEvent[]> => {
    const results = await Promise.all(targets.map(({ name, target }) => probeTarget(name, target)));
    return results.filter((r): r is ProbeResultEvent => r !== undefined);
  };

  const loop = async () => {
    while (!stopped) {
      const started = clock();
      await round();
      if (stopped) return;
      await sleep(Math.max(0, started + intervalMs - clock()), stopper.signal);
    }
  };

  // The loop never rejects (probe errors are verdicts); the catch only guards against bugs
  // surfacing as unhandled rejections in a background task.
  if (!stopped) loop().catch(() => {});

  return {
    checkNow: round,
    stop() {
      if (stopper.signal.aborted) return;
      stopped = true;
      stopper.abort();
    },
    get running() {
      return !stopped;
    },
    onProbeResult: emitter.on,
  };
}
