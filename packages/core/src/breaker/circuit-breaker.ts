import { CircuitOpenError } from '../errors/circuit-open-error.js';
import { abortError, neverAbortedSignal } from '../internal/abort.js';
import { EventEmitter } from '../internal/events.js';
import { saneClock } from '../internal/sane-clock.js';
import {
  checkFunction,
  checkOptions,
  describeValue,
  optionPath,
  optionTypeError,
} from '../internal/validate.js';
import type { Clock } from '../time/clock.js';
import { validateCircuitBreakerConfig } from './config.js';
import {
  admit,
  closeCircuit,
  encodePermit,
  halfOpenCircuitInPlace,
  isolateCircuitInPlace,
  type MutableCircuit,
  newCircuit,
  permitGeneration,
  refresh,
  retryAfter,
  settle,
  tripCircuitInPlace,
} from './machine.js';
import { fromSnapshot, toSnapshot } from './snapshot.js';
import {
  type CallOutcome,
  type CallReport,
  CIRCUIT_BREAKER_KEYS,
  type CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitBreakerSnapshot,
  type CircuitRejection,
  type CircuitState,
  type CircuitStateChange,
} from './types.js';

const countEveryError = (): boolean => true;

/** Outcome handlers for calls holding one permit value (shared by all of them). */
interface Settlers {
  readonly permit: number;
  readonly ok: (value: unknown) => unknown;
  readonly fail: (error: unknown) => never;
}

// A class keeps the per-call methods on the prototype: no closure per breaker call.
class StatefulCircuitBreaker implements CircuitBreaker {
  readonly onStateChange;
  readonly onReject;
  private readonly changes = new EventEmitter<CircuitStateChange>();
  private readonly rejections = new EventEmitter<CircuitRejection>();
  // The slow-call rule is the only reason to read the clock around a call.
  private readonly timed: boolean;
  private settlers: Settlers = {
    permit: -1,
    ok: (v) => v,
    fail: (e) => {
      throw e;
    },
  };

  constructor(
    private readonly m: MutableCircuit,
    private readonly clock: Clock,
    private readonly name: string | undefined,
    private readonly isFailure: (error: unknown) => boolean,
  ) {
    this.onStateChange = this.changes.on;
    this.onReject = this.rejections.on;
    this.timed = m.config.slowCall !== undefined;
  }

  get state(): CircuitState {
    const from = this.m.state;
    refresh(this.m, this.clock);
    this.announce(from);
    return this.m.state;
  }

  execute<T>(
    fn: (signal: AbortSignal) => Promise<T> | T,
    options?: { signal?: AbortSignal },
  ): Promise<T> {
    if (typeof fn !== 'function') {
      return Promise.reject(new TypeError(`fn must be a function, got ${describeValue(fn)}`));
    }
    const signal = options?.signal;
    if (signal !== undefined || this.timed) {
      return this.executeAsync(fn, signal ?? neverAbortedSignal);
    }
    // Hot path: no signal and no timing, so the outcome handlers only need the permit and
    // can be cached per permit value; `.then` on the call's promise is cheaper than an
    // async wrapper (one promise instead of two, no suspended frame).
    const permit = this.tryAcquire();
    if (permit < 0) return Promise.reject(this.openError());
    let result: Promise<T> | T;
    try {
      result = fn(neverAbortedSignal);
    } catch (error) {
      this.release(permit, { outcome: this.judge(error, neverAbortedSignal) });
      return Promise.reject(error);
    }
    const h = this.settlers.permit === permit ? this.settlers : this.settlersFor(permit);
    const promise = result instanceof Promise ? result : Promise.resolve(result);
    return promise.then(h.ok, h.fail) as Promise<T>;
  }

  private async executeAsync<T>(
    fn: (signal: AbortSignal) => Promise<T> | T,
    signal: AbortSignal,
  ): Promise<T> {
    if (signal.aborted) throw abortError(signal);
    const permit = this.tryAcquire();
    if (permit < 0) throw this.openError();
    const start = this.timed ? this.clock() : 0;
    let value: T;
    try {
      value = await fn(signal);
    } catch (error) {
      this.release(permit, { outcome: this.judge(error, signal), durationMs: this.elapsed(start) });
      throw error;
    }
    this.release(permit, { outcome: 'success', durationMs: this.elapsed(start) });
    return value;
  }

  private settlersFor(permit: number): Settlers {
    const settlers: Settlers = {
      permit,
      ok: (value) => {
        const m = this.m;
        // A closed circuit without a window only resets its streak on success.
        if (m.state === 'closed' && m.window === undefined) {
          if (m.generation * 2 === permit) m.consecutiveFailures = 0;
        } else {
          this.release(permit, { outcome: 'success' });
        }
        return value;
      },
      fail: (error) => {
        this.release(permit, { outcome: this.judge(error, neverAbortedSignal) });
        throw error;
      },
    };
    this.settlers = settlers;
    return settlers;
  }

  canExecute(): boolean {
    return this.tryAcquire() >= 0;
  }

  onSuccess(durationMs?: number): void {
    this.release(encodePermit(this.m.generation, false), { outcome: 'success', durationMs });
  }

  onFailure(durationMs?: number): void {
    this.release(encodePermit(this.m.generation, false), { outcome: 'failure', durationMs });
  }

  tryAcquire(): number {
    const m = this.m;
    // Closed admits without reading the clock: the hot path.
    if (m.state === 'closed') return m.generation * 2;
    const from = m.state;
    const permit = admit(m, this.clock);
    this.announce(from);
    if (permit < 0 && this.rejections.active) {
      this.rejections.emit({ name: this.name, state: m.state, retryAfterMs: this.retryAfterMs() });
    }
    return permit;
  }

  release(permit: number, report: CallReport): void {
    if (permit < 0) return;
    const from = this.m.state;
    settle(this.m, this.clock, permitGeneration(permit), report.outcome, report.durationMs);
    this.announce(from);
  }

  retryAfterMs(): number {
    const from = this.m.state;
    const ms = retryAfter(this.m, this.clock);
    this.announce(from);
    return ms;
  }

  trip(openDurationMs?: number): void {
    const ms = openDurationMs ?? this.m.openDurationMs;
    if (!(ms >= 0 && ms <= Number.MAX_SAFE_INTEGER)) {
      throw new RangeError(`trip: openDurationMs must be a finite number >= 0, got ${String(ms)}`);
    }
    const from = this.m.state;
    tripCircuitInPlace(this.m, this.clock(), ms);
    this.announce(from);
  }

  halfOpen(): void {
    const from = this.m.state;
    if (from !== 'open') return;
    halfOpenCircuitInPlace(this.m, this.clock());
    this.announce(from);
  }

  isolate(): void {
    const from = this.m.state;
    isolateCircuitInPlace(this.m, this.clock());
    this.announce(from);
  }

  reset(): void {
    const from = this.m.state;
    closeCircuit(this.m, this.clock());
    this.announce(from);
  }

  toJSON(): CircuitBreakerSnapshot {
    return toSnapshot(this.m);
  }

  private judge(error: unknown, signal: AbortSignal): CallOutcome {
    // A call the caller gave up on says nothing about the dependency.
    if (signal.aborted) return 'neutral';
    try {
      return this.isFailure(error) ? 'failure' : 'neutral';
    } catch {
      return 'neutral';
    }
  }

  private elapsed(start: number): number | undefined {
    return this.timed ? this.clock() - start : undefined;
  }

  private openError(): CircuitOpenError {
    const options: { retryAfterMs: number; circuit?: string } = {
      retryAfterMs: retryAfter(this.m, this.clock),
    };
    if (this.name !== undefined) options.circuit = this.name;
    return new CircuitOpenError(options);
  }

  private announce(from: CircuitState): void {
    const m = this.m;
    if (m.state === from || !this.changes.active) return;
    const event: CircuitStateChange = { name: this.name, from, to: m.state, at: m.changedAt };
    if (m.state === 'open') event.openDurationMs = m.openDurationMs;
    this.changes.emit(event);
  }
}

/**
 * Creates the stateful circuit breaker shared by every Breakwater piece. Options
 * are the breaker settings (validated; defaults from
 * `STANDARD_RESILIENCE.circuit`) plus `clock`, `name`, `initialState`
 * and `isFailure`.
 * @example
 * const breaker = createCircuitBreaker({ failureThreshold: 3, openDurationMs: 10_000 });
 * try {
 *   const user = await breaker.execute((signal) => fetchUser(id, { signal }));
 * } catch (e) {
 *   if (isCircuitOpenError(e)) console.log(`try again in ${e.retryAfterMs} ms`);
 * }
 */
export function createCircuitBreaker(options: CircuitBreakerOptions = {}): CircuitBreaker {
  checkOptions('createCircuitBreaker', options, CIRCUIT_BREAKER_KEYS, '', false);
  const config = optionPath(
    '',
    () => validateCircuitBreakerConfig(options),
    'createCircuitBreaker',
  );
  checkFunction('clock', options.clock);
  checkFunction('isFailure', options.isFailure);
  if (options.name !== undefined && typeof options.name !== 'string') {
    throw optionTypeError('name', `must be a string, got ${describeValue(options.name)}`);
  }
  // One hostile reading must not leave `openedAt` NaN (never half-opening again).
  const clock = saneClock(options.clock);
  const now = clock();
  const m =
    options.initialState === undefined
      ? newCircuit(config, now)
      : fromSnapshot(options.initialState, config, now);
  return new StatefulCircuitBreaker(m, clock, options.name, options.isFailure ?? countEveryError);
}
