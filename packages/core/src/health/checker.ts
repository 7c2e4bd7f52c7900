import { DeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { OperationAbortedError } from '../errors/operation-aborted-error.js';
import { EventEmitter, type Subscribe } from '../internal/events.js';
import { redactUrls } from '../internal/redact-url.js';
import { saneClock } from '../internal/sane-clock.js';
import {
  checkFunction,
  checkNumber,
  checkObject,
  checkOptions,
  keysOf,
  optionPath,
} from '../internal/validate.js';
import { createBackoff } from '../retry/backoff.js';
import type { Clock } from '../time/clock.js';
import type { RandomSource } from '../time/random.js';
import { backgroundSleep, type Sleep } from '../time/sleep.js';
import {
  describeFailure,
  type HealthVerdict,
  type ProbeSetting,
  type ProbeWatch,
  runProbe,
} from './probe.js';
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
  /** Jitter of the delay before a watch is restarted, in `[0, 1)`. Defaults to `systemRandom`. */
  random?: RandomSource;
}

/** Keys of {@link HealthCheckerOptions}. @internal */
export const HEALTH_CHECKER_KEYS = keysOf<HealthCheckerOptions>()([
  'registry',
  'targets',
  'probe',
  'intervalMs',
  'timeoutMs',
  'keepStreak',
  'clock',
  'sleep',
  'random',
]);

/** One recorded probe outcome. Carries the provider name, a reason and timing only. */
export interface ProbeResultEvent {
  /** Registry name of the probed provider. */
  provider: string;
  /** Whether the probe passed. */
  healthy: boolean;
  /** Human-readable reason from the probe (or the timeout). */
  reason: string;
  /**
   * The target's own health service reported this status over a watch (e.g. a pushed
   * `NOT_SERVING`), rather than a poll, a timeout or a failed watch saying it (a poll cannot
   * tell an unhealthy answer from no answer). A router ejects a provider that reports itself
   * unhealthy at once.
   */
  reported: boolean;
  /**
   * How long the probe took, in clock ms. For a watch: from its start to its
   * first report, 0 for later reports.
   */
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
  readonly onProbeResult: Subscribe<ProbeResultEvent>;
}

const TIMED_OUT: unique symbol = Symbol('timed out');

/** First delay before a watch that ended or failed is restarted, in ms (then doubling up to `intervalMs`). */
const WATCH_RESTART_BASE_MS = 200;

/**
 * Probes `targets` in the background — the first round at once, then every
 * `intervalMs` — and records each outcome with its latency into `registry`.
 * A probe that exceeds `timeoutMs` is a failure; a probe cut by `stop()`
 * records nothing. Rounds never overlap.
 *
 * A probe with a `watch` is not polled: each target keeps one watch, whose
 * every reported status is recorded like a probe result (and emitted). A
 * watch that fails is recorded as a failure, as is one that reports nothing
 * within `timeoutMs` (it is then cut); a watch that ended or failed is
 * restarted after a backoff (exponential from 200 ms, full jitter, capped at
 * `intervalMs`). A target whose watch resolves `'unsupported'` is polled.
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
  checkFunction('random', options.random);
  const clock = saneClock(options.clock);
  const sleep = options.sleep ?? backgroundSleep;
  const keepStreak = options.keepStreak === true;

  const emitter = new EventEmitter<ProbeResultEvent>();
  const stopper = new AbortController();
  const inFlight = new Map<string, Promise<ProbeResultEvent | undefined>>();
  let stopped = probe === 'none';
  const watch = probe === 'none' ? undefined : probe.watch;
  if (watch !== undefined) checkFunction('probe.watch', watch, false);
  // Targets probed by rounds: all of them, or (with a watch) those that cannot be watched.
  const polled = watch === undefined ? targets : [];

  /**
   * `durationMs` feeds the registry's latency unless `pushed` (a watch's later report: no round
   * trip); `reported`: a status the target's watch reported.
   */
  const record = (
    provider: string,
    verdict: HealthVerdict,
    durationMs: number,
    pushed = false,
    reported = false,
  ) => {
    if (verdict.healthy)
      registry.success(
        provider,
        pushed ? undefined : durationMs,
        keepStreak ? { keepStreak } : undefined,
      );
    else registry.failure(provider);
    const event = {
      provider,
      healthy: verdict.healthy,
      reason: verdict.reason,
      durationMs,
      reported,
    };
    emitter.emit(event);
    return event;
  };

  /**
   * Signals for one probe or watch, both aborted by `stop()`: its own, and its
   * timeout sleep's — separate, so a finished probe (or a watch's first report)
   * can release the sleep. `release()` drops both and the stop listener.
   */
  const linkToStop = () => {
    const own = new AbortController();
    const timer = new AbortController();
    const onStop = () => {
      own.abort(new OperationAbortedError({ message: 'Health checker stopped' }));
      timer.abort();
    };
    stopper.signal.addEventListener('abort', onStop, { once: true });
    const release = () => {
      timer.abort();
      stopper.signal.removeEventListener('abort', onStop);
    };
    return { own, timer, release };
  };

  const probeOnce = async (provider: string, target: T, run: Exclude<ProbeSetting<T>, 'none'>) => {
    const { own: probeAbort, timer: timerAbort, release } = linkToStop();
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
      release();
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

  const round = async (
    list: readonly { name: string; target: T }[] = targets,
  ): Promise<ProbeResultEvent[]> => {
    const results = await Promise.all(list.map(({ name, target }) => probeTarget(name, target)));
    return results.filter((r): r is ProbeResultEvent => r !== undefined);
  };

  const loop = async () => {
    while (!stopped) {
      const started = clock();
      await round(polled);
      if (stopped) return;
      await sleep(Math.max(0, started + intervalMs - clock()), stopper.signal);
    }
  };

  const restartBackoff = createBackoff({
    baseDelayMs: Math.min(WATCH_RESTART_BASE_MS, intervalMs),
    strategy: 'exponential',
    maxDelayMs: intervalMs,
    jitter: 'full',
    ...(options.random === undefined ? {} : { random: options.random }),
  });

  /** Runs one watch until it ends; resolves with how it ended. */
  const watchOnce = async (
    provider: string,
    target: T,
    run: ProbeWatch<T>,
  ): Promise<'unsupported' | 'ended'> => {
    const { own: watchAbort, timer: timerAbort, release } = linkToStop();
    const started = clock();
    let reported = false;
    const report = (healthy: boolean, reason?: string) => {
      if (stopped || watchAbort.signal.aborted) return;
      const text =
        reason === undefined ? (healthy ? 'ok' : 'unhealthy') : redactUrls(String(reason));
      // Only the first report is a round trip: later ones are pushed, with no latency to speak of.
      const pushed = reported;
      if (!reported) {
        reported = true;
        timerAbort.abort();
      }
      const durationMs = pushed ? 0 : clock() - started;
      record(provider, { healthy: healthy === true, reason: text }, durationMs, pushed, true);
    };
    const silent = sleep(timeoutMs, timerAbort.signal).then(() =>
      // A sleep released by the first report (or stop) never wins the race.
      timerAbort.signal.aborted ? new Promise<never>(() => {}) : TIMED_OUT,
    );
    try {
      const outcome = await Promise.race([
        run(target, { provider, signal: watchAbort.signal, report }),
        silent,
      ]);
      if (outcome === TIMED_OUT) {
        watchAbort.abort(new DeadlineExceededError(timeoutMs));
        if (!stopped) {
          const reason = `watch reported nothing within ${timeoutMs} ms`;
          record(provider, { healthy: false, reason }, clock() - started);
        }
        return 'ended';
      }
      return outcome === 'unsupported' ? 'unsupported' : 'ended';
    } catch (error) {
      if (!stopped) {
        record(provider, { healthy: false, reason: describeFailure(error) }, clock() - started);
      }
      return 'ended';
    } finally {
      watchAbort.abort();
      release();
    }
  };

  /** Keeps one watch on `target` while running; falls back to polling it when unsupported. */
  const watchLoop = async (name: string, target: T, run: ProbeWatch<T>) => {
    let restarts = 0;
    while (!stopped) {
      const started = clock();
      if ((await watchOnce(name, target, run)) === 'unsupported') {
        if (!stopped) polled.push({ name, target });
        // Probed now rather than at the next round, so the target is never left unchecked.
        await probeTarget(name, target);
        return;
      }
      if (stopped) return;
      // A watch that held for an interval was a working one: its restart starts the schedule over.
      restarts = clock() - started >= intervalMs ? 1 : restarts + 1;
      await sleep(restartBackoff.delayFor(restarts), stopper.signal);
    }
  };

  // The loops never reject (probe and watch errors are verdicts); the catch only guards against
  // bugs surfacing as unhandled rejections in a background task.
  if (!stopped) {
    loop().catch(() => {});
    if (watch !== undefined) {
      for (const { name, target } of targets) watchLoop(name, target, watch).catch(() => {});
    }
  }

  return {
    checkNow: () => round(),
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
