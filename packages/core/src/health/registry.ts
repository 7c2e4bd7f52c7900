import { halfOpenCircuit } from '../breaker/circuit-state.js';
import { DEFAULT_CIRCUIT_BREAKER_OPTIONS } from '../breaker/config.js';
import type { CircuitBreakerState } from '../breaker/machine.js';
import type { CircuitState } from '../breaker/types.js';
import { saneClock } from '../internal/sane-clock.js';
import {
  checkFunction,
  checkNumber,
  checkOptions,
  describeValue,
  keysOf,
} from '../internal/validate.js';
import { type Clock, systemClock } from '../time/clock.js';
import {
  applyOutcome,
  circuitAt,
  circuitFromFacts,
  circuitOpenUntil,
  type HealthOutcome,
  newHealthCircuit,
} from './registry-circuit.js';

/** Options of {@link createHealthRegistry} and {@link HealthRegistry.scoped}. */
export interface HealthRegistryOptions {
  /** Failures in a row that open a provider's circuit (integer > 0), as the breaker's `failureThreshold`. Defaults to the breaker's, 5. */
  failureThreshold?: number;
  /** How long an opened circuit stays open, in ms, as the breaker's `openDurationMs`. Defaults to the breaker's, 200 ms. */
  openDurationMs?: number;
  /** Time source. Defaults to `systemClock` (for `scoped`, the parent's clock). */
  clock?: Clock;
}

/** Keys of {@link HealthRegistryOptions}. @internal */
export const HEALTH_REGISTRY_KEYS = keysOf<HealthRegistryOptions>()([
  'failureThreshold',
  'openDurationMs',
  'clock',
]);

/** Options of {@link HealthRegistry.success}. */
export interface HealthSuccessOptions {
  /** Count the success but leave the failure streak and the circuit alone. Defaults to false. */
  keepStreak?: boolean;
}

/** One provider's entry in {@link HealthRegistry.snapshot}. */
export interface ProviderHealth {
  /** Successes recorded. */
  ok: number;
  /** Failures recorded. */
  fail: number;
  /** Failures since the last streak-resetting success. */
  streak: number;
  /** Smoothed latency in ms, or undefined before the first timed success. */
  latency: number | undefined;
  /** Clock time until which the circuit is (or was) open in the current streak; 0 if it has not opened. */
  openUntil: number;
  /** `!isOpen(name)` now. */
  healthy: boolean;
}

/** Write side of the registry: what probes, checkers and routers record into. */
export interface HealthRecorder {
  /** Records a success; `ms` feeds the smoothed latency. */
  success(name: string, ms?: number, options?: HealthSuccessOptions): void;
  /** Records a failure. */
  failure(name: string): void;
}

/** Per-provider health counts with a circuit per provider (SPEC §3). */
export interface HealthRegistry extends HealthRecorder {
  /**
   * ok += 1; the streak resets and the circuit closes for good, unless
   * `keepStreak`. `ms` updates the latency: first sample as is, then
   * `0.7 × previous + 0.3 × ms`.
   */
  success(name: string, ms?: number, options?: HealthSuccessOptions): void;
  /** A deferred success was confirmed: streak = 0, circuit closed. A no-op for an unknown name. */
  settle(name: string): void;
  /** fail += 1, streak += 1; at `streak >= failureThreshold` the circuit opens until `now + openDurationMs`. */
  failure(name: string): void;
  /**
   * A health signal (a passing health check, a connection back to READY) says
   * `name` answers again: its open circuit half-opens now instead of after
   * `openDurationMs`, so the next call may go through as its recovery call; the streak
   * is kept, so a failure re-opens it at once. A no-op for an unknown name or
   * a circuit that is not open.
   */
  halfOpen(name: string): void;
  /** `streak >= failureThreshold && now < lastFailure + openDurationMs`. False for an unknown name. */
  isOpen(name: string): boolean;
  /** `closed`, `open`, or `half-open` (cool-down over, streak kept: the next failure re-opens). */
  circuitState(name: string): CircuitState;
  /** Milliseconds until the circuit stops refusing; 0 when it is not open. */
  retryAfterMs(name: string): number;
  /** `(ok + 1) / (ok + fail + 1)`; 1 for an unknown name. */
  successRate(name: string): number;
  /** Smoothed latency in ms, or undefined. */
  latency(name: string): number | undefined;
  /** Every provider that has recorded anything, judged now. */
  snapshot(): Record<string, ProviderHealth>;
  /** A view over the same counts (recording through it writes them) judged by other settings. */
  scoped(options?: HealthRegistryOptions): HealthRegistry;
  /** The resolved failure threshold. */
  readonly failureThreshold: number;
  /** The resolved open duration, in ms. */
  readonly openDurationMs: number;
  /** The clock this view judges by. */
  readonly clock: Clock;
}

/** Shared counts of one provider, plus one circuit per (failures, reset) setting that read them. */
interface Entry {
  ok: number;
  fail: number;
  streak: number;
  latency: number | undefined;
  lastFailure: number;
  /** One circuit per (failures, reset) setting of the views that read this entry; usually one. */
  circuits: ViewCircuit[];
}

interface ViewCircuit {
  key: string;
  state: CircuitBreakerState;
}

type Store = Map<string, Entry>;

const checkName = (name: unknown) => {
  if (typeof name !== 'string' || name === '') {
    throw new TypeError(`name must be a non-empty string, got ${describeValue(name)}`);
  }
};

/** Reports one outcome to every circuit of `entry` (each view's settings). No allocation when nothing changes. */
function update(entry: Entry, outcome: HealthOutcome, clock: Clock): void {
  const cs = entry.circuits;
  for (let i = 0; i < cs.length; i++) {
    const vc = cs[i] as ViewCircuit;
    vc.state = applyOutcome(vc.state, outcome, clock);
  }
}

function createView(
  store: Store,
  options: HealthRegistryOptions,
  parent?: HealthRegistry,
): HealthRegistry {
  checkOptions(parent ? 'scoped' : 'createHealthRegistry', options, HEALTH_REGISTRY_KEYS);
  const failures =
    options.failureThreshold === undefined
      ? (parent?.failureThreshold ?? DEFAULT_CIRCUIT_BREAKER_OPTIONS.failureThreshold)
      : checkNumber('failureThreshold', options.failureThreshold, { integer: true, above: 0 });
  const reset =
    options.openDurationMs === undefined
      ? (parent?.openDurationMs ?? DEFAULT_CIRCUIT_BREAKER_OPTIONS.openDurationMs)
      : checkNumber('openDurationMs', options.openDurationMs, { min: 0 });
  checkFunction('clock', options.clock);
  const userClock = options.clock ?? parent?.clock ?? systemClock;
  // Judged through a filter: one hostile reading must not open a circuit for good.
  const clock = saneClock(userClock);
  const key = `${failures}:${reset}`;

  const entry = (name: string): Entry => {
    checkName(name);
    let e = store.get(name);
    if (e === undefined) {
      e = { ok: 0, fail: 0, streak: 0, latency: undefined, lastFailure: 0, circuits: [] };
      store.set(name, e);
    }
    return e;
  };

  // This view's circuit for `e`; a view meeting an entry first derives it from the counts.
  const circuit = (e: Entry): CircuitBreakerState => {
    const cs = e.circuits;
    for (let i = 0; i < cs.length; i++) {
      const vc = cs[i] as ViewCircuit;
      if (vc.key === key) return vc.state;
    }
    const state =
      e.streak === 0
        ? newHealthCircuit(failures, reset)
        : circuitFromFacts(failures, reset, e.streak, e.lastFailure);
    cs.push({ key, state });
    return state;
  };

  const judge = (name: string) => {
    const e = store.get(name);
    const c = e === undefined ? undefined : circuit(e);
    // A closed circuit needs no clock read (the hot path of a router's health check).
    return circuitAt(c, c === undefined || c.state === 'closed' ? 0 : clock());
  };

  const view: HealthRegistry = {
    failureThreshold: failures,
    openDurationMs: reset,
    clock: userClock,
    success(name, ms, opts) {
      // Only a bad value pays for the validator (it names the option in its error).
      if (ms !== undefined && !(ms >= 0 && ms < Number.POSITIVE_INFINITY))
        checkNumber('ms', ms, { min: 0 });
      const e = entry(name);
      circuit(e);
      e.ok += 1;
      if (ms !== undefined) e.latency = e.latency === undefined ? ms : 0.7 * e.latency + 0.3 * ms;
      if (opts?.keepStreak !== true) e.streak = 0;
      update(e, opts?.keepStreak === true ? 'neutral' : 'success', clock);
    },
    settle(name) {
      checkName(name);
      const e = store.get(name);
      if (e === undefined) return;
      e.streak = 0;
      update(e, 'success', clock);
    },
    failure(name) {
      const e = entry(name);
      circuit(e);
      const now = clock();
      e.fail += 1;
      e.streak += 1;
      e.lastFailure = now;
      // Every circuit must open at the same instant as lastFailure.
      update(e, 'failure', () => now);
    },
    halfOpen(name) {
      checkName(name);
      const e = store.get(name);
      if (e === undefined) return;
      circuit(e);
      const now = clock();
      for (const vc of e.circuits) vc.state = halfOpenCircuit(vc.state, now);
    },
    isOpen: (name) => judge(name).state === 'open',
    circuitState: (name) => judge(name).state,
    retryAfterMs: (name) => judge(name).retryAfterMs,
    successRate(name) {
      const e = store.get(name);
      return e === undefined ? 1 : (e.ok + 1) / (e.ok + e.fail + 1);
    },
    latency: (name) => store.get(name)?.latency,
    snapshot() {
      const out: Record<string, ProviderHealth> = {};
      for (const [name, e] of store) {
        const c = circuit(e);
        out[name] = {
          ok: e.ok,
          fail: e.fail,
          streak: e.streak,
          latency: e.latency,
          openUntil: circuitOpenUntil(c),
          healthy: circuitAt(c, clock()).state !== 'open',
        };
      }
      return out;
    },
    scoped: (scopedOptions = {}) => createView(store, scopedOptions, view),
  };
  return view;
}

/**
 * Creates a health registry: per-provider success/failure counts, smoothed
 * latency and a circuit per provider — the shared breaker state machine with
 * `halfOpenMaxCalls: Infinity`, and the breaker's default `failureThreshold` (5) and
 * `openDurationMs` (200 ms); the registry counts a streak only (no span, no window:
 * its circuits are rebuilt from the shared counts). After `openDurationMs` the circuit lets traffic through
 * again but keeps the streak, so the next failure re-opens it at once; a
 * success closes it for good. Reading never creates an entry.
 * @example
 * const health = createHealthRegistry({ failureThreshold: 3, openDurationMs: 1_000 });
 * health.failure('eu'); health.isOpen('eu'); // false until the third failure in a row
 */
export function createHealthRegistry(options: HealthRegistryOptions = {}): HealthRegistry {
  return createView(new Map(), options);
}
