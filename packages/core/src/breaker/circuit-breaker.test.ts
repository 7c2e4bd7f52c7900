import { describe, expect, it, vi } from 'vitest';
import { isCircuitOpenError } from '../errors/circuit-open-error.js';
import { neverAbortedSignal } from '../internal/abort.js';
import { COUNT_ONLY_CIRCUIT } from '../test-helpers/circuit.js';
import { createManualClock } from '../time/manual-clock.js';
import { createCircuitBreaker } from './circuit-breaker.js';
import { checkCircuit, createCircuitBreakerState, recordFailure } from './circuit-state.js';
import { getDefaultCircuitBreakerConfig } from './config.js';
import type { CircuitBreakerOptions, CircuitStateChange } from './types.js';

const boom = () => {
  throw new Error('boom');
};

function setup(options: CircuitBreakerOptions = {}) {
  const clock = createManualClock(1000);
  const breaker = createCircuitBreaker({
    ...COUNT_ONLY_CIRCUIT,
    clock,
    failureThreshold: 2,
    openDurationMs: 100,
    ...options,
  });
  const changes: Array<Pick<CircuitStateChange, 'from' | 'to' | 'at'>> = [];
  breaker.onStateChange(({ from, to, at }) => changes.push({ from, to, at }));
  const trip = async () => {
    for (let i = 0; i < 2; i++) await breaker.execute(boom).catch(() => {});
  };
  return { clock, breaker, changes, trip };
}

describe('execute', () => {
  it('returns the value and hands fn the shared never-aborted signal or the caller’s', async () => {
    const { breaker } = setup();
    const seen: AbortSignal[] = [];
    const fn = (signal: AbortSignal) => {
      seen.push(signal);
      return 42;
    };
    const caller = new AbortController().signal;
    expect(await breaker.execute(fn)).toBe(42);
    expect(await breaker.execute(fn, { signal: caller })).toBe(42);
    expect(seen).toEqual([neverAbortedSignal, caller]);
  });

  it('rejects with CircuitOpenError without calling fn when open, and fires onReject', async () => {
    const { breaker, clock, trip } = setup({ name: 'users' });
    const rejects: unknown[] = [];
    breaker.onReject((e) => rejects.push(e));
    await trip();
    clock.advance(30);
    const fn = vi.fn(() => 1);
    const error = await breaker.execute(fn).catch((e: unknown) => e);
    expect(fn).not.toHaveBeenCalled();
    expect(isCircuitOpenError(error)).toBe(true);
    expect(error).toMatchObject({ retryAfterMs: 70, circuit: 'users' });
    expect(rejects).toEqual([{ name: 'users', state: 'open', retryAfterMs: 70 }]);
  });

  it('rethrows fn’s error unchanged and counts it', async () => {
    const { breaker } = setup();
    const error = new Error('x');
    await expect(breaker.execute(() => Promise.reject(error))).rejects.toBe(error);
    expect(breaker.toJSON().consecutiveFailures).toBe(1);
  });

  it('a failure after the caller’s signal aborted is neutral', async () => {
    const { breaker } = setup();
    const ac = new AbortController();
    await expect(
      breaker.execute(
        () => {
          ac.abort();
          throw new Error('cancelled');
        },
        { signal: ac.signal },
      ),
    ).rejects.toThrow('cancelled');
    expect(breaker.toJSON().consecutiveFailures).toBe(0);
  });

  it('never calls fn on an already-aborted signal and rejects with its reason', async () => {
    const { breaker } = setup();
    const reason = new Error('gone');
    const fn = vi.fn();
    await expect(breaker.execute(fn, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(fn).not.toHaveBeenCalled();
  });

  it('isFailure decides what counts; a throwing classifier makes it neutral', async () => {
    const { breaker } = setup({
      isFailure: (e) => {
        if ((e as Error).message === 'bad classifier') throw new Error('oops');
        return (e as Error).message !== 'ignored';
      },
    });
    await breaker.execute(() => Promise.reject(new Error('ignored'))).catch(() => {});
    await breaker.execute(() => Promise.reject(new Error('bad classifier'))).catch(() => {});
    expect(breaker.toJSON().consecutiveFailures).toBe(0);
    await breaker.execute(boom).catch(() => {});
    expect(breaker.toJSON().consecutiveFailures).toBe(1);
  });

  it('accepts sync values, sync throws and foreign thenables', async () => {
    const { breaker } = setup({ failureThreshold: 3 });
    expect(await breaker.execute(() => 'sync')).toBe('sync');
    // biome-ignore lint/suspicious/noThenProperty: a foreign thenable is exactly what is tested.
    const thenable = { then: (resolve: (v: string) => void) => resolve('thenable') };
    expect(await breaker.execute(() => thenable as unknown as Promise<string>)).toBe('thenable');
    await expect(breaker.execute(boom)).rejects.toThrow('boom');
    await expect(breaker.execute(boom, { signal: new AbortController().signal })).rejects.toThrow(
      'boom',
    );
    expect(breaker.toJSON().consecutiveFailures).toBe(2);
    await expect(breaker.execute(5 as never)).rejects.toThrow(TypeError);
    expect(breaker.toJSON().consecutiveFailures).toBe(2);
  });

  it('a call still running when the circuit opens does not count when it settles', async () => {
    const { breaker, clock, trip } = setup();
    let failLate!: (e: Error) => void;
    const late = breaker.execute(() => new Promise((_, reject) => (failLate = reject)));
    await trip();
    clock.advance(100);
    let finishProbe!: (v: string) => void;
    const probe = breaker.execute(() => new Promise<string>((resolve) => (finishProbe = resolve)));
    expect(breaker.state).toBe('half-open');
    failLate(new Error('late'));
    await expect(late).rejects.toThrow('late');
    expect(breaker.state).toBe('half-open');
    finishProbe('ok');
    expect(await probe).toBe('ok');
    expect(breaker.state).toBe('closed');
  });

  it('a success from an older closed generation does not reset the new streak', async () => {
    const { breaker, clock, trip } = setup({ failureThreshold: 3 });
    let finishLate!: (v: number) => void;
    const late = breaker.execute(() => new Promise<number>((resolve) => (finishLate = resolve)));
    await trip();
    await breaker.execute(boom).catch(() => {});
    clock.advance(100);
    await breaker.execute(() => 'probe');
    expect(breaker.state).toBe('closed');
    await breaker.execute(boom).catch(() => {});
    finishLate(1);
    expect(await late).toBe(1);
    expect(breaker.toJSON().consecutiveFailures).toBe(1);
  });

  it('measures durations with the clock for the slow-call rule', async () => {
    const { breaker, clock } = setup({
      failureThreshold: Number.POSITIVE_INFINITY,
      window: { type: 'count', size: 2, failureRateThreshold: 1 },
      slowCall: { durationMs: 50, rateThreshold: 1 },
    });
    await breaker.execute(() => clock.advance(10));
    await breaker.execute(() => clock.advance(60));
    expect(breaker.state).toBe('closed'); // one slow of two
    await breaker.execute(() => clock.advance(50));
    expect(breaker.state).toBe('open'); // both of the last two slow
  });
});

describe('half-open through the stateful API', () => {
  it('goes half-open lazily, admits one probe via canExecute, and onSuccess closes', async () => {
    const { breaker, clock, changes, trip } = setup();
    await trip();
    clock.advance(100);
    expect(changes).toEqual([{ from: 'closed', to: 'open', at: 1000 }]);
    expect(breaker.retryAfterMs()).toBe(0);
    expect(breaker.state).toBe('half-open');
    expect(breaker.canExecute()).toBe(true);
    expect(breaker.canExecute()).toBe(false);
    breaker.onSuccess();
    expect(breaker.state).toBe('closed');
    expect(changes.map((c) => `${c.from}>${c.to}@${c.at}`)).toEqual([
      'closed>open@1000',
      'open>half-open@1100',
      'half-open>closed@1100',
    ]);
  });

  it('onFailure from a probe re-opens with the multiplied duration in the event', async () => {
    const { breaker, clock, trip } = setup({ backoffMultiplier: 2 });
    const events: CircuitStateChange[] = [];
    breaker.onStateChange((e) => events.push(e));
    await trip();
    clock.advance(100);
    expect(breaker.canExecute()).toBe(true);
    clock.advance(5);
    breaker.onFailure();
    expect(events.at(-1)).toEqual({
      name: undefined,
      from: 'half-open',
      to: 'open',
      at: 1105,
      openDurationMs: 200,
    });
    expect(breaker.retryAfterMs()).toBe(200);
  });

  it('release with a stale permit does not move state; a neutral probe frees the slot', async () => {
    const { breaker, clock, trip } = setup();
    const stale = breaker.tryAcquire();
    await trip();
    clock.advance(100);
    const probe = breaker.tryAcquire();
    expect(probe % 2).toBe(1);
    expect(breaker.tryAcquire()).toBe(-1);
    breaker.release(stale, { outcome: 'failure' });
    breaker.release(stale, { outcome: 'neutral' });
    expect(breaker.state).toBe('half-open');
    expect(breaker.tryAcquire()).toBe(-1);
    breaker.release(probe, { outcome: 'neutral' });
    const next = breaker.tryAcquire();
    expect(next).toBe(probe);
    breaker.release(next, { outcome: 'success', durationMs: 3 });
    expect(breaker.state).toBe('closed');
    breaker.release(-1, { outcome: 'failure' }); // a refused permit is ignored
    expect(breaker.toJSON().consecutiveFailures).toBe(0);
  });

  it('listeners can be disposed', async () => {
    const { breaker, trip } = setup();
    const seen: string[] = [];
    const sub = breaker.onStateChange((e) => seen.push(e.to));
    sub.dispose();
    sub.dispose();
    await trip();
    expect(seen).toEqual([]);
  });
});

describe('isolate, reset, snapshots', () => {
  it('isolate refuses everything until reset; both fire events', async () => {
    const { breaker, clock, changes } = setup();
    breaker.isolate();
    clock.advance(1_000_000);
    const error = await breaker.execute(() => 1).catch((e: unknown) => e);
    expect(error).toMatchObject({ retryAfterMs: Number.POSITIVE_INFINITY });
    expect(breaker.state).toBe('open');
    breaker.reset();
    expect(await breaker.execute(() => 'ok')).toBe('ok');
    expect(changes.map((c) => c.to)).toEqual(['open', 'closed']);
  });

  it('toJSON round-trips through initialState, keeping the cool-down', async () => {
    const { breaker, clock, trip } = setup({ backoffMultiplier: 3 });
    await trip();
    clock.advance(100);
    breaker.canExecute();
    breaker.onFailure(); // open for 300 from 1100
    const snapshot = JSON.parse(JSON.stringify(breaker.toJSON()));
    expect(snapshot).toEqual({
      state: 'open',
      consecutiveFailures: 3,
      openedAt: 1100,
      openDurationMs: 300,
      isolated: false,
    });
    const restored = createCircuitBreaker({
      ...COUNT_ONLY_CIRCUIT,
      clock,
      openDurationMs: 100,
      initialState: snapshot,
    });
    expect(restored.retryAfterMs()).toBe(300);
    clock.advance(300);
    expect(restored.tryAcquire()).toBeGreaterThanOrEqual(0);
    restored.onSuccess();
    expect(restored.toJSON()).toMatchObject({ state: 'closed', openDurationMs: 100 });
  });

  it('restores isolation and half-open', () => {
    const clock = createManualClock();
    const base = { state: 'open', consecutiveFailures: 0, openedAt: 0, openDurationMs: 0 } as const;
    const isolated = createCircuitBreaker({
      ...COUNT_ONLY_CIRCUIT,
      clock,
      initialState: { ...base, isolated: true },
    });
    expect(isolated.canExecute()).toBe(false);
    const half = createCircuitBreaker({
      ...COUNT_ONLY_CIRCUIT,
      clock,
      initialState: { ...base, state: 'half-open', isolated: false },
    });
    expect([half.canExecute(), half.canExecute()]).toEqual([true, false]);
  });

  it('rejects bad options and snapshots, naming them', () => {
    const snap = { state: 'open', consecutiveFailures: 0, openedAt: 0, openDurationMs: 0 };
    const make = (o: unknown) => () => createCircuitBreaker(o as CircuitBreakerOptions);
    expect(make({ clock: 5 })).toThrow(/clock/);
    expect(make({ name: 5 })).toThrow(/name/);
    expect(make({ isFailure: 'yes' })).toThrow(/isFailure/);
    expect(make({ failureThreshold: -1 })).toThrow(/failureThreshold/);
    expect(make({ initialState: 'open' })).toThrow(/initialState/);
    expect(make({ initialState: { ...snap, state: 'ajar', isolated: false } })).toThrow(
      /initialState\.state/,
    );
    expect(make({ initialState: { ...snap, isolated: 'no' } })).toThrow(/initialState\.isolated/);
    expect(make({ initialState: { ...snap, openedAt: Number.NaN, isolated: false } })).toThrow(
      /initialState\.openedAt/,
    );
  });
});

describe('hot path', () => {
  it('the closed success path never reads the clock', async () => {
    let reads = 0;
    const breaker = createCircuitBreaker({
      ...COUNT_ONLY_CIRCUIT,
      clock: () => {
        reads += 1;
        return 0;
      },
    });
    reads = 0;
    for (let i = 0; i < 100; i++) {
      breaker.release(breaker.tryAcquire(), { outcome: 'success' });
      await breaker.execute(() => i);
    }
    expect(reads).toBe(0);
  });
});

describe('open-duration backoff stays finite (issue 16 #12)', () => {
  /** Re-opens the circuit `rounds` times through failed probes; returns the open durations seen. */
  function reopen(options: CircuitBreakerOptions, rounds: number) {
    const clock = createManualClock(1000);
    const breaker = createCircuitBreaker({
      ...COUNT_ONLY_CIRCUIT,
      clock,
      failureThreshold: 1,
      openDurationMs: 1000,
      ...options,
    });
    breaker.onFailure();
    const durations: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const wait = breaker.retryAfterMs();
      durations.push(wait);
      if (!Number.isFinite(wait)) break;
      clock.advance(wait);
      const permit = breaker.tryAcquire();
      if (permit < 0) break;
      expect(breaker.state).toBe('half-open');
      breaker.release(permit, { outcome: 'failure' });
    }
    return { breaker, clock, durations };
  }

  it('with backoffMultiplier 2 and no maxOpenDurationMs, 10,000 re-openings still half-open after a 10 × openDurationMs cap', () => {
    const { breaker, clock, durations } = reopen({ backoffMultiplier: 2 }, 10_000);
    expect(durations).toHaveLength(10_000);
    expect(durations.slice(0, 6)).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect(Math.max(...durations)).toBe(10_000);
    // Still recovers: a successful probe after the cap closes it.
    clock.advance(breaker.retryAfterMs());
    const permit = breaker.tryAcquire();
    expect(permit).toBeGreaterThanOrEqual(0);
    breaker.release(permit, { outcome: 'success' });
    expect(breaker.state).toBe('closed');
    expect(breaker.retryAfterMs()).toBe(0);
  });

  it('the default cap is documented: 2 s for the default 200 ms, 5 min for 30 s', () => {
    const { openDurationMs } = getDefaultCircuitBreakerConfig();
    expect(Math.max(...reopen({ backoffMultiplier: 3, openDurationMs }, 20).durations)).toBe(2_000);
    const { durations } = reopen({ backoffMultiplier: 3, openDurationMs: 30_000 }, 20);
    expect(Math.max(...durations)).toBe(300_000);
  });

  it('an explicit maxOpenDurationMs of Infinity saturates instead of reaching Infinity', () => {
    // The pure API takes `now` as given, so the clock may run far past the Date range here.
    let s = createCircuitBreakerState({
      ...COUNT_ONLY_CIRCUIT,
      failureThreshold: 1,
      openDurationMs: 1000,
      backoffMultiplier: 2,
      maxOpenDurationMs: Number.POSITIVE_INFINITY,
    });
    let now = 0;
    s = recordFailure(s, s.config, now);
    const durations: number[] = [];
    for (let i = 0; i < 1100; i++) {
      now = s.openedAt + s.openDurationMs;
      const { result, updatedState } = checkCircuit(s, now);
      expect(result.probe).toBe(true);
      s = recordFailure(updatedState, s.config, now, { generation: result.generation });
      durations.push(s.openDurationMs);
    }
    expect(durations.every(Number.isFinite)).toBe(true);
    expect(durations.at(-1)).toBe(Number.MAX_SAFE_INTEGER);
    // `openedAt + openDurationMs - now` rounds at this size; it only has to stay finite.
    const wait = checkCircuit(s, now).result.retryAfterMs;
    expect(Number.isFinite(wait) && wait > 9e15).toBe(true);
  });
});
