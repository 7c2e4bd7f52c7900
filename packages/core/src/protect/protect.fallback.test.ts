import { describe, expect, it } from 'vitest';
import { isCircuitOpenError } from '../errors/circuit-open-error.js';
import { isQueueFullError } from '../errors/queue-full-error.js';
import { COUNT_ONLY_CIRCUIT } from '../test-helpers/circuit.js';
import { createManualClock } from '../time/manual-clock.js';
import { protect } from './protect.js';

describe('protect: fallback', () => {
  it('runs once after the final error; its result is the call’s', async () => {
    const run = protect({ retry: { attempts: 3, backoff: { baseDelayMs: 0 } } });
    const seen: unknown[] = [];
    const last = new Error('last');
    const value = await run(
      ({ attempt }) => {
        throw attempt === 3 ? last : new Error('earlier');
      },
      {
        fallback: (error, { signal }) => {
          seen.push(error, signal.aborted);
          return 'fallback';
        },
      },
    );
    expect(value).toBe('fallback');
    expect(seen).toEqual([last, false]);
  });

  it('its error is the call’s error; an async fallback is awaited', async () => {
    const run = protect();
    await expect(
      run(() => Promise.reject(new Error('op')), {
        fallback: () => Promise.reject(new Error('fb')),
      }),
    ).rejects.toThrow('fb');
    await expect(
      run(() => Promise.reject(new Error('op')), {
        fallback: () => {
          throw new Error('sync fb');
        },
      }),
    ).rejects.toThrow('sync fb');
    await expect(
      run(() => Promise.reject(new Error('op')), { fallback: async () => 5 }),
    ).resolves.toBe(5);
  });

  it('does not run on success or external abort', async () => {
    const run = protect();
    let fallbacks = 0;
    const fallback = () => String(++fallbacks);
    await expect(run(() => 'fine', { fallback })).resolves.toBe('fine');
    const ac = new AbortController();
    const p = run(() => new Promise(() => {}), { signal: ac.signal, fallback });
    ac.abort(new Error('gone'));
    await expect(p).rejects.toThrow('gone');
    expect(fallbacks).toBe(0);
  });

  it('runs at once on circuit rejection and on queue rejection, with the rejection error', async () => {
    const run = protect({
      concurrency: { limit: 1 },
      circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 1000 },
    });
    const errors: unknown[] = [];
    const events: unknown[] = [];
    run.onFallback((e) => events.push(e));
    const fallback = (e: unknown) => {
      errors.push(e);
      return 'fb';
    };
    let release: () => void = () => {};
    const busy = run(() => new Promise<void>((r) => (release = r)));
    await expect(run(() => 'never', { fallback })).resolves.toBe('fb');
    release();
    await busy;
    await run(() => Promise.reject(new Error('down'))).catch(() => {});
    await expect(run(() => 'never', { fallback })).resolves.toBe('fb');
    expect(isQueueFullError(errors[0])).toBe(true);
    expect(isCircuitOpenError(errors[1])).toBe(true);
    expect(events).toEqual([{ reason: 'queue-full' }, { reason: 'circuit-open' }]);
  });

  it('a successful fallback does not close the circuit', async () => {
    const clock = createManualClock();
    const run = protect({
      circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 1000 },
      clock,
    });
    await run(() => Promise.reject(new Error('down'))).catch(() => {});
    expect(run.circuit?.state).toBe('open');
    await expect(run(() => 'x', { fallback: () => 'fb' })).resolves.toBe('fb');
    clock.advance(1000);
    // The probe fails; its fallback succeeds; the circuit stays open.
    await expect(
      run(() => Promise.reject(new Error('still down')), { fallback: () => 'fb' }),
    ).resolves.toBe('fb');
    expect(run.circuit?.state).toBe('open');
  });

  it('has no retries of its own, and failover: false skips it', async () => {
    const run = protect({ retry: { attempts: 2, backoff: { baseDelayMs: 0 } } });
    let fallbacks = 0;
    await expect(
      run(() => Promise.reject(new Error('op')), {
        fallback: () => {
          fallbacks++;
          throw new Error('fb failed');
        },
      }),
    ).rejects.toThrow('fb failed');
    expect(fallbacks).toBe(1);
    await expect(
      run(() => Promise.reject(new Error('op')), {
        classify: () => ({ failover: false }),
        fallback: () => 'unused',
      }),
    ).rejects.toThrow('op');
  });
});
