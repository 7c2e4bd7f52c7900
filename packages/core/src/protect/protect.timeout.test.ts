import { describe, expect, it } from 'vitest';
import {
  DeadlineExceededError,
  isDeadlineExceededError,
} from '../errors/deadline-exceeded-error.js';
import { createManualClock } from '../time/manual-clock.js';
import { protect } from './protect.js';

describe('protect: timeout', () => {
  it("'immediate' ends the attempt at once; its signal aborts with DeadlineExceededError; a late rejection is absorbed", async () => {
    const clock = createManualClock();
    const run = protect({ attemptTimeoutMs: 100, clock, sleep: clock.sleep });
    let signal: AbortSignal | undefined;
    let rejectLate: (e: unknown) => void = () => {};
    const p = run(
      (ctx) =>
        new Promise((_, reject) => {
          signal = ctx.signal;
          rejectLate = reject;
        }),
    );
    const settled = p.catch((e: unknown) => e);
    await clock.advanceAsync(99);
    expect(signal?.aborted).toBe(false);
    await clock.advanceAsync(1);
    const error = await settled;
    expect(error).toBeInstanceOf(DeadlineExceededError);
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBe(error);
    rejectLate(new Error('late')); // must not surface as unhandled
    await clock.flush();
    expect(clock.pending).toBe(0);
  });

  it.each([
    ['resolves', true],
    ['rejects', false],
  ] as const)(
    'an abandoned attempt that %s late, while its retry runs, changes nothing; the runner is unharmed',
    async (_how, ok) => {
      const clock = createManualClock();
      const run = protect({
        retry: { attempts: 3, backoff: { baseDelayMs: 0 } },
        attemptTimeoutMs: 10,
        clock,
        sleep: clock.sleep,
      });
      const seen: number[] = [];
      const p = run(async ({ attempt }) => {
        seen.push(attempt);
        if (attempt === 1) {
          // Times out at 10 ms, settles at 12 ms: while attempt 2 (10-15 ms) still runs.
          await clock.sleep(12);
          if (ok) return 'late one';
          throw new Error('late one');
        }
        await clock.sleep(5);
        return `attempt ${attempt}`;
      });
      await expect(clock.run(p)).resolves.toBe('attempt 2');
      expect(seen).toEqual([1, 2]);
      expect(run.active).toBe(0);
      // The call object may be reused: the next calls see nothing of the last one.
      await expect(clock.run(run(async () => 'next'))).resolves.toBe('next');
      await expect(clock.run(run(async () => 'and next'))).resolves.toBe('and next');
      expect(clock.pending).toBe(0);
    },
  );

  /** A stack with 100 ms attempts and a fixed 1 s backoff, recording each attempt's start. */
  const slowBackoff = (attempts: number) => {
    const clock = createManualClock();
    const run = protect({
      retry: { attempts, backoff: { baseDelayMs: 1000, maxDelayMs: 1000, jitter: 'none' } },
      attemptTimeoutMs: 100,
      clock,
      sleep: clock.sleep,
    });
    return { clock, run, starts: [] as number[] };
  };

  it('timeout is per attempt and excludes backoff', async () => {
    const { clock, run, starts } = slowBackoff(2);
    const p = run(({ attempt }) => {
      starts.push(clock());
      // The second attempt takes 90 ms: within its own 100 ms although 1090 ms passed overall.
      return attempt === 1
        ? Promise.reject(new Error('refused'))
        : clock.sleep(90).then(() => 'ok');
    });
    await expect(clock.run(p)).resolves.toBe('ok');
    expect(starts).toEqual([0, 1000]);
    expect(clock()).toBe(1090);
  });

  it('retries an attempt that timed out at once: it already waited, so it skips the backoff', async () => {
    const { clock, run, starts } = slowBackoff(3);
    const p = run(({ attempt }) => {
      starts.push(clock());
      return attempt < 3 ? new Promise(() => {}) : clock.sleep(10).then(() => 'ok');
    });
    await expect(clock.run(p)).resolves.toBe('ok');
    expect(starts).toEqual([0, 100, 200]);
  });

  it('attemptTimeoutMs left out: a hung attempt is cut at 3 x the p99 of the runner (>= 100 ms) and retried within the deadline; with no latency known it is not cut', async () => {
    const clock = createManualClock();
    const run = protect({ timeoutMs: 1_000, retry: { attempts: 3 }, clock, sleep: clock.sleep });
    let hang = true;
    const starts: number[] = [];
    const call = () =>
      run(() => {
        starts.push(clock());
        if (hang) {
          hang = false;
          return new Promise<string>(() => {});
        }
        return clock.sleep(10).then(() => 'ok');
      });
    // Nothing learned yet: no evidence of a hang, so the attempt runs to the call's deadline.
    await expect(clock.run(call())).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(starts).toEqual([0]);
    // Twenty 10 ms successes: 3 x p99 is under the 100 ms floor.
    for (let i = 0; i < 20; i++) await clock.run(call());
    hang = true;
    starts.length = 0;
    const t0 = clock();
    await expect(clock.run(call())).resolves.toBe('ok');
    expect(starts.map((t) => t - t0)).toEqual([0, 100]);
    // An explicit attemptTimeoutMs means exactly that (and none: the call's deadline).
    const whole = protect({
      timeoutMs: 1_000,
      attemptTimeoutMs: false,
      retry: { attempts: 3 },
      clock,
      sleep: clock.sleep,
    });
    await expect(clock.run(whole(() => new Promise(() => {})))).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
  });

  it('attemptTimeoutMs left out: an upstream answering in 600 ms under a 1 s deadline is never cut, every call one attempt', async () => {
    const clock = createManualClock();
    const run = protect({ timeoutMs: 1_000, retry: { attempts: 3 }, clock, sleep: clock.sleep });
    let attempts = 0;
    for (let i = 0; i < 30; i++) {
      const p = run(() => {
        attempts++;
        return clock.sleep(600).then(() => 'ok');
      });
      await expect(clock.run(p)).resolves.toBe('ok');
    }
    expect(attempts).toBe(30);
  });

  it('timeout excludes queue wait', async () => {
    const clock = createManualClock();
    const run = protect({
      attemptTimeoutMs: 100,
      concurrency: { limit: 1, maxQueue: 1 },
      clock,
      sleep: clock.sleep,
    });
    const first = run(() => clock.sleep(80).then(() => 1));
    const second = run(() => clock.sleep(80).then(() => 2));
    await expect(clock.run(Promise.all([first, second]))).resolves.toEqual([1, 2]);
    expect(clock()).toBe(160);
  });

  it("'wait' waits for the callback to settle and never overlaps attempts", async () => {
    const clock = createManualClock();
    const run = protect({
      retry: { attempts: 3, backoff: { baseDelayMs: 0 } },
      attemptTimeoutMs: 100,
      timeoutMode: 'wait',
      clock,
      sleep: clock.sleep,
    });
    let running = 0;
    let maxRunning = 0;
    const log: string[] = [];
    const p = run(({ signal, attempt }) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      log.push(`start ${attempt} @${clock()}`);
      // Honours the signal only 50 ms after it aborts.
      return new Promise((_, reject) => {
        signal.addEventListener('abort', () => {
          void clock.sleep(50).then(() => {
            running--;
            log.push(`end ${attempt} @${clock()}`);
            reject(new Error('cancelled late'));
          });
        });
      });
    });
    const error = await clock.run(p).catch((e: unknown) => e);
    expect(isDeadlineExceededError(error)).toBe(true);
    expect(maxRunning).toBe(1);
    expect(log).toEqual([
      'start 1 @0',
      'end 1 @150',
      'start 2 @150',
      'end 2 @300',
      'start 3 @300',
      'end 3 @450',
    ]);
  });

  it("'wait': a callback that succeeds after its deadline still fails the attempt with the deadline", async () => {
    const clock = createManualClock();
    const run = protect({ attemptTimeoutMs: 100, timeoutMode: 'wait', clock, sleep: clock.sleep });
    const p = run(() => clock.sleep(150).then(() => 'late'));
    await expect(clock.run(p)).rejects.toSatisfy(isDeadlineExceededError);
    expect(clock()).toBe(150);
  });

  it('a callback that never reads the signal still times out; onTimeout reports it', async () => {
    const clock = createManualClock();
    const run = protect({
      retry: { attempts: 2, backoff: { baseDelayMs: 0 } },
      attemptTimeoutMs: 50,
      clock,
      sleep: clock.sleep,
    });
    const events: unknown[] = [];
    run.onTimeout((e) => events.push(e));
    await expect(clock.run(run(() => new Promise(() => {})))).rejects.toSatisfy(
      isDeadlineExceededError,
    );
    expect(events).toEqual([
      { attempt: 1, timeoutMs: 50 },
      { attempt: 2, timeoutMs: 50 },
    ]);
    expect(clock.pending).toBe(0);
  });

  it('the host timer path times out too (shared timer wheel)', async () => {
    const run = protect({ attemptTimeoutMs: 20 });
    let signal: AbortSignal | undefined;
    const error = await run((ctx) => {
      signal = ctx.signal;
      return new Promise(() => {});
    }).catch((e: unknown) => e);
    expect(isDeadlineExceededError(error)).toBe(true);
    expect(signal?.aborted).toBe(true);
  });

  it('a fast callback on the host timer resolves and leaves its signal quiet', async () => {
    const run = protect({ attemptTimeoutMs: 1000 });
    let signal: AbortSignal | undefined;
    await expect(
      run(async (ctx) => {
        signal = ctx.signal;
        return 7;
      }),
    ).resolves.toBe(7);
    expect(signal?.aborted).toBe(false);
  });
});
