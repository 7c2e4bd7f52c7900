import { describe, expect, it } from 'vitest';
import { withTimeout } from '../deadline/with-timeout.js';
import { createPool } from '../pool/pool.js';
import { protect } from '../protect/protect.js';
import { withRetry } from '../retry/with-retry.js';
import { createRouter } from '../routing/router.js';
import { trackProcessFaults } from '../test-helpers/unhandled.js';
import { createManualClock } from '../time/manual-clock.js';
import { systemSleep } from '../time/sleep.js';

// Per-call options are checked before the call takes anything: a bad call throws TypeError
// synchronously (naming the option), and the next call finds every slot, timer and permit free.
const faults = trackProcessFaults();
const badSignals: unknown[] = [{}, { aborted: false }, 'signal', 1, null];

describe('per-call options', () => {
  it('protect: a bad signal, fallback or classify throws naming it and leaves no slot taken', async () => {
    const clock = createManualClock();
    const run = protect({
      concurrency: { limit: 1 },
      attemptTimeoutMs: 50,
      circuit: { failureThreshold: 1, openDurationMs: 1000 },
      clock,
      sleep: clock.sleep,
    });
    for (const signal of badSignals) {
      expect(() => run(() => 1, { signal: signal as never })).toThrow(
        /protect run options\.signal must be an AbortSignal/,
      );
    }
    expect(() => run(() => 1, { fallback: 1 as never })).toThrow(
      /options\.fallback must be a function/,
    );
    expect(() => run(() => 1, { classify: 'x' as never })).toThrow(
      /options\.classify must be a function/,
    );
    expect(() => run(() => 1, 5 as never)).toThrow(/protect run options must be an object/);
    expect(run.active).toBe(0);
    expect(clock.pending).toBe(0);
    await expect(run(() => 'next')).resolves.toBe('next');
    expect(run.circuit?.state).toBe('closed');
  });

  it('withTimeout: a bad signal throws before the deadline is scheduled', async () => {
    const clock = createManualClock();
    for (const signal of badSignals) {
      expect(() =>
        withTimeout(() => 1, { timeoutMs: 50, signal: signal as never, sleep: clock.sleep }),
      ).toThrow(/^signal must be an AbortSignal/);
    }
    expect(clock.pending).toBe(0);
    await expect(withTimeout(() => 'next', { timeoutMs: 50, sleep: clock.sleep })).resolves.toBe(
      'next',
    );
  });

  it('withTimeout on the host timer: a bad signal leaves no deadline to crash the process later', async () => {
    expect(() => withTimeout(() => 1, { timeoutMs: 20, signal: {} as never })).toThrow(
      /^signal must be an AbortSignal/,
    );
    // Past the deadline the bad call would have had: its timer would have thrown inside the shared wheel.
    await systemSleep(40);
    expect(faults.faults).toEqual([]);
  });

  it('withRetry: a bad signal throws TypeError naming it', async () => {
    expect(() => withRetry(() => 1, { signal: { aborted: false } as never })).toThrow(
      /^signal must be an AbortSignal/,
    );
    await expect(withRetry(() => 'next')).resolves.toBe('next');
  });

  it('router.execute: a bad signal, fallback or classify throws naming it and leaves no slot taken', async () => {
    const router = createRouter({
      providers: [{ id: 'a', resource: 1 }],
      concurrency: { limit: 1 },
    });
    for (const signal of badSignals) {
      expect(() => router.execute(() => 1, { signal: signal as never })).toThrow(
        /router\.execute options\.signal must be an AbortSignal/,
      );
    }
    expect(() => router.execute(() => 1, { fallback: {} as never })).toThrow(
      /router\.execute options\.fallback must be a function/,
    );
    expect(() => router.execute(() => 1, { classify: 3 as never })).toThrow(
      /router\.execute options\.classify must be a function/,
    );
    expect(() => router.execute(7 as never)).toThrow(/router\.execute\(fn\) must be a function/);
    expect(router.active).toBe(0);
    await expect(router.execute((r) => r + 1)).resolves.toBe(2);
  });

  it('pool.run: a bad signal or task throws naming it, before queueing', async () => {
    const pool = createPool({ concurrency: 1 });
    for (const signal of badSignals) {
      expect(() => pool.run(() => 1, { signal: signal as never })).toThrow(
        /pool\.run options\.signal must be an AbortSignal/,
      );
    }
    expect(() => pool.run('task' as never)).toThrow(/pool\.run\(task\) must be a function/);
    expect(pool.stats()).toMatchObject({ active: 0, queued: 0, started: 0 });
    await expect(pool.run(() => 'next')).resolves.toBe('next');
  });

  it('accepts a signal from another realm or a polyfill (duck-typed)', async () => {
    const real = new AbortController().signal;
    const like = {
      aborted: false,
      reason: undefined,
      addEventListener: real.addEventListener.bind(real),
      removeEventListener: real.removeEventListener.bind(real),
    };
    await expect(protect()(() => 'ok', { signal: like as never })).resolves.toBe('ok');
  });
});
