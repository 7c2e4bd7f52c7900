/**
 * The one circuit-breaker state machine (SPEC §2), as in-place transitions on a
 * plain record. The immutable API copies the record first; the stateful
 * breaker owns one record and mutates it, so the hot path allocates nothing.
 * Both read the clock only when a rule needs the time.
 * @internal
 */
import type { Clock } from '../time/clock.js';
import { DEFAULT_CIRCUIT_BREAKER_OPTIONS } from './config.js';
import type { CallOutcome, CircuitBreakerConfig, CircuitState } from './types.js';
import {
  CODE_FAILED,
  CODE_SLOW,
  clearWindow,
  cloneWindow,
  createWindow,
  type RateWindowState,
  recordCall,
  windowTripped,
} from './window.js';

/** The complete state of one circuit, as the pure API passes it around. Never mutate it. */
export interface CircuitBreakerState {
  /** `closed`, `open` or `half-open`. */
  readonly state: CircuitState;
  /** Bumped by every transition; outcomes of calls admitted in an older generation are ignored. */
  readonly generation: number;
  /** Counted failures in a row (kept while open and half-open; reset when it closes). */
  readonly consecutiveFailures: number;
  /** Clock time of the first failure of the current streak (read only with `failureSpanMs`). */
  readonly streakStartedAt: number;
  /** Distinct moments of the current streak: failures at least `failureSpanMs / failureThreshold` apart (read only with `failureSpanMs`). */
  readonly streakMoments: number;
  /** Clock time of the latest of those moments (read only with `failureSpanMs`). */
  readonly streakMomentAt: number;
  /** Clock time that moment's call was sent, when its duration was known. */
  readonly streakMomentSentAt: number | undefined;
  /**
   * Distinct moments of failure since the circuit last closed (or was created; counted
   * afresh when a time window has forgotten the latest), by the streak's rule but not
   * reset by a success: the window judges failures only once there are
   * `failureThreshold` of them (read only with `failureSpanMs`).
   */
  readonly failureMoments: number;
  /** Clock time of the latest of those moments (read only with `failureSpanMs`). */
  readonly failureMomentAt: number;
  /** Clock time that moment's call was sent, when its duration was known. */
  readonly failureMomentSentAt: number | undefined;
  /** Clock time the circuit last opened. */
  readonly openedAt: number;
  /** Cool-down in force: the base, multiplied by each failed probe, capped. */
  readonly openDurationMs: number;
  /** Half-open probe slots taken (a neutral probe gives its slot back). */
  readonly probesAdmitted: number;
  /** Successful probes in this half-open generation. */
  readonly probeSuccesses: number;
  /** Clock time the last half-open probe was admitted (a probe slot is leased for one open duration). */
  readonly probeAdmittedAt: number;
  /** Forced open by `isolate` until reset. */
  readonly isolated: boolean;
  /** Clock time of the last transition. */
  readonly changedAt: number;
  /** Failure-rate window of the closed circuit, when configured. */
  readonly window: RateWindowState | undefined;
  /** The validated settings this circuit runs with. */
  readonly config: CircuitBreakerConfig;
}

/** The same record, writable. @internal */
export type MutableCircuit = { -readonly [K in keyof CircuitBreakerState]: CircuitBreakerState[K] };

/** A fresh closed circuit. @internal */
export function newCircuit(config: CircuitBreakerConfig, now = 0): MutableCircuit {
  return {
    state: 'closed',
    generation: 0,
    consecutiveFailures: 0,
    streakStartedAt: 0,
    streakMoments: 0,
    streakMomentAt: 0,
    streakMomentSentAt: undefined,
    failureMoments: 0,
    failureMomentAt: 0,
    failureMomentSentAt: undefined,
    openedAt: 0,
    openDurationMs: config.openDurationMs,
    probesAdmitted: 0,
    probeSuccesses: 0,
    probeAdmittedAt: 0,
    isolated: false,
    changedAt: now,
    window: config.window === undefined ? undefined : createWindow(config.window),
    config,
  };
}

/** A deep copy (the window is the only nested mutable part). @internal */
export function copyCircuit(s: CircuitBreakerState): MutableCircuit {
  return { ...s, window: s.window === undefined ? undefined : cloneWindow(s.window) };
}

/** Permit for a call admitted in `generation`: encodes both in one number. @internal */
export function encodePermit(generation: number, probe: boolean): number {
  return generation * 2 + (probe ? 1 : 0);
}

/**
 * True when `permit` (from `tryAcquire`) admitted the call as a half-open
 * probe. A probe must not be retried or hedged on the same circuit: its
 * failure re-opens the circuit, and repeating it would send a recovering
 * upstream a burst instead of one request.
 */
export function isProbePermit(permit: number): boolean {
  return permit >= 0 && permit % 2 === 1;
}

/** The generation a permit was issued in. @internal */
export function permitGeneration(permit: number): number {
  return Math.floor(permit / 2);
}

function transition(m: MutableCircuit, to: CircuitState, now: number): void {
  m.state = to;
  m.generation += 1;
  m.changedAt = now;
  m.probesAdmitted = 0;
  m.probeSuccesses = 0;
}

function open(m: MutableCircuit, now: number, durationMs: number): void {
  transition(m, 'open', now);
  m.openedAt = now;
  m.openDurationMs = durationMs;
  if (m.window !== undefined) clearWindow(m.window);
}

/**
 * The open duration after a failed probe: multiplied, capped at `max`, and
 * saturating at `Number.MAX_SAFE_INTEGER` (never below `current`) so an
 * uncapped multiplier cannot reach `Infinity`, where the circuit would stay
 * open for good and `openedAt + openDurationMs` would stop meaning anything.
 * @internal
 */
export function nextOpenDuration(current: number, multiplier: number, max: number): number {
  return Math.min(current * multiplier, max, Math.max(current, Number.MAX_SAFE_INTEGER));
}

/** Open → half-open once the cool-down has run out (lazily; there is no timer). @internal */
export function refresh(m: MutableCircuit, clock: Clock): void {
  if (m.state !== 'open' || m.isolated) return;
  const now = clock();
  if (now >= m.openedAt + m.openDurationMs) transition(m, 'half-open', now);
}

/**
 * Admission check: a permit `>= 0`, or `-1` when refused. A half-open probe
 * slot is leased for one open duration: when every slot is taken and the last
 * probe went out at least `openDurationMs` ago, one more probe is admitted (in
 * the same generation, so any probe's outcome counts). A probe that hangs — a
 * black-holed upstream — then does not stretch the probe cadence to its deadline.
 * @internal
 */
export function admit(m: MutableCircuit, clock: Clock): number {
  if (m.state === 'closed') return m.generation * 2;
  refresh(m, clock);
  if (m.state !== 'half-open') return -1;
  const now = clock();
  if (m.probesAdmitted >= m.config.halfOpenMaxCalls) {
    if (!(m.openDurationMs > 0 && now - m.probeAdmittedAt >= m.openDurationMs)) return -1;
    m.probesAdmitted -= 1;
  }
  m.probesAdmitted += 1;
  m.probeAdmittedAt = now;
  return encodePermit(m.generation, true);
}

/** Milliseconds until a call may be admitted. @internal */
export function retryAfter(m: MutableCircuit, clock: Clock): number {
  refresh(m, clock);
  if (m.state !== 'open') return 0;
  if (m.isolated) return Number.POSITIVE_INFINITY;
  return Math.max(0, m.openedAt + m.openDurationMs - clock());
}

/**
 * Records the outcome of a call admitted in `generation`. Older generations are
 * ignored; neutral outcomes only give a probe slot back.
 * @internal
 */
export function settle(
  m: MutableCircuit,
  clock: Clock,
  generation: number,
  outcome: CallOutcome,
  durationMs: number | undefined,
): void {
  if (generation !== m.generation || outcome === 'neutral') {
    if (generation === m.generation && m.state === 'half-open' && m.probesAdmitted > 0) {
      m.probesAdmitted -= 1;
    }
    return;
  }
  const c = m.config;
  if (m.state === 'closed') {
    const failed = outcome === 'failure';
    m.consecutiveFailures = failed ? m.consecutiveFailures + 1 : 0;
    let tripped = m.consecutiveFailures >= c.failureThreshold;
    if (c.failureSpanMs > 0 && failed) {
      // The clock is read only on failures, and only when a span is asked for.
      const now = clock();
      const sentAt = durationMs === undefined ? undefined : now - durationMs;
      if (m.consecutiveFailures === 1) {
        m.streakStartedAt = now;
        m.streakMoments = 1;
        m.streakMomentAt = now;
        m.streakMomentSentAt = sentAt;
      } else if (isNewMoment(c, now, sentAt, m.streakMomentAt, m.streakMomentSentAt)) {
        m.streakMoments += 1;
        m.streakMomentAt = now;
        m.streakMomentSentAt = sentAt;
      }
      if (
        m.failureMoments === 0 ||
        // The time window has forgotten every earlier moment: count afresh.
        (c.window?.type === 'time' && now - m.failureMomentAt >= c.window.sizeMs)
      ) {
        m.failureMoments = 1;
        m.failureMomentAt = now;
        m.failureMomentSentAt = sentAt;
      } else if (isNewMoment(c, now, sentAt, m.failureMomentAt, m.failureMomentSentAt)) {
        m.failureMoments += 1;
        m.failureMomentAt = now;
        m.failureMomentSentAt = sentAt;
      }
      // The span alone is not enough: one failure just before an event-loop stall and the
      // deadline timers that all fire right after it span the stall, yet land at two
      // moments. An outage keeps failing moment after moment.
      if (
        tripped &&
        (now - m.streakStartedAt < c.failureSpanMs || m.streakMoments < c.failureThreshold)
      ) {
        tripped = false;
      }
    }
    if (m.window !== undefined && c.window !== undefined) {
      const now = clock();
      // With a span, the window judges failures only once they fell at `failureThreshold`
      // distinct moments since the circuit closed: a window that has seen few calls (a
      // client starting cold, or one just closed) is filled by one burst otherwise — the
      // calls in flight through a stall all failing at once.
      const countFailures = c.failureSpanMs === 0 || m.failureMoments >= momentsNeeded(c);
      // An unknown duration is never slow.
      const slow =
        c.slowCall !== undefined && durationMs !== undefined && durationMs >= c.slowCall.durationMs;
      recordCall(m.window, (failed ? CODE_FAILED : 0) | (slow ? CODE_SLOW : 0), now);
      tripped ||= windowTripped(m.window, c.window, c.slowCall, now, countFailures);
      if (tripped) open(m, now, m.openDurationMs);
    } else if (tripped) {
      open(m, clock(), m.openDurationMs);
    }
  } else if (m.state === 'half-open') {
    if (outcome === 'failure') {
      // The streak is kept, so the health registry's "next failure re-opens at once" holds.
      m.consecutiveFailures += 1;
      open(
        m,
        clock(),
        nextOpenDuration(m.openDurationMs, c.backoffMultiplier, c.maxOpenDurationMs),
      );
      return;
    }
    m.probeSuccesses += 1;
    if (m.probeSuccesses >= c.successThreshold) closeCircuit(m, clock());
  }
  // Open: nothing is admitted in an open generation, so a stray report changes nothing.
}

/**
 * Distinct moments a streak, and the window's failures, must fall at with a span:
 * `failureThreshold`, or the default threshold when it is `Infinity` (the window alone).
 */
function momentsNeeded(c: CircuitBreakerConfig): number {
  return Number.isFinite(c.failureThreshold)
    ? c.failureThreshold
    : DEFAULT_CIRCUIT_BREAKER_OPTIONS.failureThreshold;
}

/**
 * How much further apart two failures' sends may be than the failures themselves for the
 * failures to be in step: attempt timeouts vary a little, a stall's backlog is compressed.
 */
const IN_STEP = 1.5;

/**
 * Whether a failure at `now` (its call sent at `sentAt`, when its duration is known) is a
 * new moment after the moment at `previousAt` (its call sent at `previousSentAt`): at
 * least `gap` = `failureSpanMs / failureThreshold` later, and, with a known send time,
 * either of a call sent at or after that moment, or of one sent at least `gap` after that
 * moment's call and failing in step with it (sends at most {@link IN_STEP} × as far apart
 * as the failures). A hung upstream fails each call one timeout after it was sent, so its
 * failures move as their sends do: with 1 s timeouts it opens about 1.5 s after the hang,
 * not one timeout per moment later. After an event-loop stall a starved process works
 * through the deadlines of every call in flight in a burst, far faster than they were sent
 * (in the soak, 20 ms of sends per 5 ms): nothing new. An outage fails calls sent since.
 */
function isNewMoment(
  c: CircuitBreakerConfig,
  now: number,
  sentAt: number | undefined,
  previousAt: number,
  previousSentAt: number | undefined,
): boolean {
  const gap = c.failureSpanMs / momentsNeeded(c);
  if (now - previousAt < gap) return false;
  if (sentAt === undefined || sentAt >= previousAt) return true;
  if (previousSentAt === undefined) return false;
  const sendsApart = sentAt - previousSentAt;
  return sendsApart >= gap && sendsApart <= IN_STEP * (now - previousAt);
}

/** Closes the circuit: counters and window cleared, cool-down back to base. @internal */
export function closeCircuit(m: MutableCircuit, now: number): void {
  transition(m, 'closed', now);
  m.consecutiveFailures = 0;
  m.failureMoments = 0;
  m.openDurationMs = m.config.openDurationMs;
  m.isolated = false;
  if (m.window !== undefined) clearWindow(m.window);
}

/**
 * A counted failure observed while open (reported from outside the breaker's
 * own admissions): the cool-down restarts from `now` at the current open
 * duration (not multiplied: it was no failed probe) and the streak grows.
 * Anything but a non-isolated open circuit is left alone.
 * @internal
 */
export function reopenCircuitInPlace(m: MutableCircuit, now: number): void {
  if (m.state !== 'open' || m.isolated) return;
  m.consecutiveFailures += 1;
  open(m, now, m.openDurationMs);
}

/**
 * Opens the circuit from `now` for `durationMs` (a trip decided elsewhere, e.g.
 * by another process of a fleet). An open period that ends later is kept, and
 * an isolated circuit stays isolated.
 * @internal
 */
export function tripCircuitInPlace(m: MutableCircuit, now: number, durationMs: number): void {
  if (m.isolated) return;
  if (m.state === 'open' && m.openedAt + m.openDurationMs >= now + durationMs) return;
  open(m, now, durationMs);
}

/**
 * Open → half-open now, without waiting out the cool-down: a health signal
 * (a passing health check, a connection back to READY) says the upstream
 * answers again, so the next call may probe it. The open duration in force is
 * kept (a failed probe re-opens with it, grown as usual). Anything but a
 * non-isolated open circuit is left alone.
 * @internal
 */
export function halfOpenCircuitInPlace(m: MutableCircuit, now: number): void {
  if (m.state !== 'open' || m.isolated) return;
  transition(m, 'half-open', now);
}

/** Forces the circuit open until {@link closeCircuit}. @internal */
export function isolateCircuitInPlace(m: MutableCircuit, now: number): void {
  if (m.isolated) return;
  open(m, now, m.openDurationMs);
  m.isolated = true;
}
