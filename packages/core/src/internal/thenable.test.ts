import { describe, expect, it } from 'vitest';
import { withTimeout } from '../deadline/with-timeout.js';
import { isRoutingError, type RoutingError } from '../errors/routing-error.js';
import { createPool } from '../pool/pool.js';
import { protect } from '../protect/protect.js';
import { withRetry } from '../retry/with-retry.js';
import { createRouter } from '../routing/router.js';
import { tick } from '../test-helpers/async.js';
import { trackProcessFaults } from '../test-helpers/unhandled.js';
import { createManualClock } from '../time/manual-clock.js';
import { isThenable } from './thenable.js';

const process = trackProcessFaults();

/** An object whose `then` getter throws `error`. */
function hostileGetter(error: Error): unknown {
  return Object.defineProperty({}, 'then', {
    get() {
      throw error;
    },
  });
}

/** An object whose `then` method throws `error` when called. */
function hostileMethod(error: Error): unknown {
  return {
    // biome-ignore lint/suspicious/noThenProperty: the hostile thenable under test.
    then() {
      throw error;
    },
  };
}

const hostiles = [hostileGetter, hostileMethod];

/** Lets every late timer and rejection surface before asserting none went unhandled. */
async function settleLate(clock: ReturnType<typeof createManualClock>): Promise<void> {
  await clock.advanceAsync(1_000);
  await tick();
  await tick();
}

describe('hostile thenables', () => {
  it('isThenable never throws: an unreadable `then` counts as a thenable', () => {
    expect(isThenable(hostileGetter(new Error('x')))).toBe(true);
    expect(isThenable(Object.defineProperty({}, 'then', { value: 1 }))).toBe(false);
    expect(isThenable(null)).toBe(false);
  });

  for (const hostile of hostiles) {
    it(`withTimeout rejects with the thenable's error, never throws, leaves nothing behind (${hostile.name})`, async () => {
      const clock = createManualClock();
      const boom = new Error('then exploded');
      const p = withTimeout(() => hostile(boom), { timeoutMs: 50, sleep: clock.sleep });
      await expect(p).rejects.toBe(boom);
      await settleLate(clock);
      expect(clock.pending).toBe(0);
      expect(process.faults).toEqual([]);
    });

    it(`protect with retries retries and then rejects with the thenable's error (${hostile.name})`, async () => {
      const clock = createManualClock();
      const boom = new Error('then exploded');
      const run = protect({
        retry: { attempts: 3, backoff: { baseDelayMs: 0 } },
        attemptTimeoutMs: 50,
        concurrency: { limit: 1 },
        clock,
        sleep: clock.sleep,
      });
      let calls = 0;
      const p = run(() => {
        calls++;
        return hostile(boom);
      });
      await expect(clock.run(p)).rejects.toBe(boom);
      expect(calls).toBe(3);
      await settleLate(clock);
      expect(run.active).toBe(0);
      expect(process.faults).toEqual([]);
      await expect(run(() => 'next')).resolves.toBe('next');
    });

    it(`the router with a timeout fails the visit with the thenable's error (${hostile.name})`, async () => {
      const clock = createManualClock();
      const boom = new Error('then exploded');
      const router = createRouter({
        providers: [{ id: 'a', resource: 1 }],
        protection: { attemptTimeoutMs: 50 },
        concurrency: { limit: 1 },
        clock,
        sleep: clock.sleep,
      });
      const error = await clock.run(router.execute(() => hostile(boom) as never)).catch((e) => e);
      expect(isRoutingError(error)).toBe(true);
      expect((error as RoutingError).visits[0]).toMatchObject({ status: 'failed', cause: boom });
      await settleLate(clock);
      expect(router.active).toBe(0);
      expect(process.faults).toEqual([]);
    });

    it(`withRetry and pool.run reject with the thenable's error (${hostile.name})`, async () => {
      const boom = new Error('then exploded');
      await expect(withRetry(() => hostile(boom), { attempts: 1 })).rejects.toBe(boom);
      const pool = createPool({ concurrency: 1 });
      await expect(pool.run(() => hostile(boom))).rejects.toBe(boom);
      expect(pool.active).toBe(0);
      await tick();
      expect(process.faults).toEqual([]);
    });
  }
});
