import { describe, expect, it } from 'vitest';
import { isDeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { isOperationAbortedError } from '../errors/operation-aborted-error.js';
import { isQueueFullError } from '../errors/queue-full-error.js';
import { tick } from '../test-helpers/async.js';
import { createManualClock } from '../time/manual-clock.js';
import { protect } from './protect.js';

describe('protect: concurrency and queue', () => {
  it('one slot covers the whole call, retries and backoff included', async () => {
    const clock = createManualClock();
    const run = protect({
      retry: { attempts: 3, backoff: { baseDelayMs: 100, maxDelayMs: 100, jitter: 'none' } },
      concurrency: { limit: 1, maxQueue: 1 },
      clock,
      sleep: clock.sleep,
    });
    const log: string[] = [];
    const a = run(({ attempt }) => {
      log.push(`a${attempt}@${clock()}`);
      if (attempt < 3) throw new Error('retry me');
      return 'a';
    });
    const b = run(() => {
      log.push(`b@${clock()}`);
      return 'b';
    });
    expect(run.active).toBe(1);
    expect(run.queued).toBe(1);
    await clock.advanceAsync(150);
    expect(run.queued).toBe(1); // a is backing off and still holds its slot
    await expect(clock.run(Promise.all([a, b]))).resolves.toEqual(['a', 'b']);
    expect(log).toEqual(['a1@0', 'a2@100', 'a3@200', 'b@200']);
  });

  it('maxQueue 0 (the default) rejects with QueueFullError without running', async () => {
    const run = protect({ concurrency: { limit: 1 } });
    let release: () => void = () => {};
    const a = run(() => new Promise<void>((r) => (release = r)));
    let ran = false;
    const error = await run(() => {
      ran = true;
    }).catch((e: unknown) => e);
    expect(isQueueFullError(error)).toBe(true);
    expect(ran).toBe(false);
    release();
    await a;
  });

  it('queues up to maxQueue, FIFO; then QueueFullError and an onReject event', async () => {
    const run = protect({ concurrency: { limit: 1, maxQueue: 2 } });
    const rejects: unknown[] = [];
    run.onReject((e) => rejects.push(e));
    const order: number[] = [];
    let release: () => void = () => {};
    const first = run(() => new Promise<void>((r) => (release = r)));
    const queued = [1, 2].map((n) => run(() => void order.push(n)));
    await expect(run(() => 3)).rejects.toSatisfy(isQueueFullError);
    expect(rejects).toEqual([{ reason: 'queue-full' }]);
    release();
    await Promise.all([first, ...queued]);
    expect(order).toEqual([1, 2]);
  });

  it("a call keeps its slot until its fallback's promise settles; then the queued call starts", async () => {
    const run = protect({ concurrency: { limit: 1, maxQueue: 1 } });
    let releaseFallback: (v: string) => void = () => {};
    const first = run(
      () => {
        throw new Error('down');
      },
      { fallback: () => new Promise<string>((r) => (releaseFallback = r)) },
    );
    let ran = false;
    const second = run(() => {
      ran = true;
      return 'second';
    });
    await tick();
    expect([run.active, run.queued, ran]).toEqual([1, 1, false]);
    releaseFallback('fallback');
    await expect(Promise.all([first, second])).resolves.toEqual(['fallback', 'second']);
    expect([run.active, run.queued, ran]).toEqual([0, 0, true]);
  });

  it('a slot is given back on every way out: success, failure, policy error, abort', async () => {
    const run = protect({ concurrency: { limit: 1 } });
    await expect(run(() => 1)).resolves.toBe(1);
    await expect(run(() => Promise.reject(new Error('x')))).rejects.toThrow('x');
    await expect(
      run(
        () => {
          throw new Error('y');
        },
        {
          classify: () => {
            throw new Error('policy');
          },
        },
      ),
    ).rejects.toSatisfy((e: Error) => e.name === 'ErrorPolicyError');
    const ac = new AbortController();
    const aborted = run(() => new Promise(() => {}), { signal: ac.signal });
    expect(run.active).toBe(1);
    ac.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    expect(run.active).toBe(0);
    await expect(run(() => 'still usable')).resolves.toBe('still usable');
  });

  it('maxQueue Infinity never refuses', async () => {
    const run = protect({ concurrency: { limit: 1, maxQueue: Number.POSITIVE_INFINITY } });
    const all = Array.from({ length: 50 }, (_, i) => run(async () => i));
    await expect(Promise.all(all)).resolves.toHaveLength(50);
  });

  it('a queued call whose signal aborts leaves the queue at once and frees its place', async () => {
    const run = protect({ concurrency: { limit: 1, maxQueue: 1 } });
    let release: () => void = () => {};
    const first = run(() => new Promise<void>((r) => (release = r)));
    const ac = new AbortController();
    let ran = false;
    const queued = run(
      () => {
        ran = true;
      },
      { signal: ac.signal },
    );
    expect(run.queued).toBe(1);
    const reason = new Error('caller gave up');
    ac.abort(reason);
    await expect(queued).rejects.toBe(reason);
    expect(run.queued).toBe(0);
    const next = run(() => 'took the place');
    release();
    await first;
    await expect(next).resolves.toBe('took the place');
    expect(ran).toBe(false);
  });
});

describe('protect: cancellation', () => {
  it('an already-aborted signal never runs fn and rejects with its reason', async () => {
    const run = protect({ concurrency: { limit: 2 } });
    const reason = new Error('stop');
    let ran = false;
    await expect(
      run(
        () => {
          ran = true;
        },
        { signal: AbortSignal.abort(reason) },
      ),
    ).rejects.toBe(reason);
    expect(ran).toBe(false);
  });

  it('external abort rejects at once with the reason and aborts the attempt signal', async () => {
    const run = protect({
      retry: { attempts: 3, backoff: { baseDelayMs: 0 } },
      attemptTimeoutMs: 10_000,
    });
    const ac = new AbortController();
    let seen: AbortSignal | undefined;
    let calls = 0;
    const p = run(
      ({ signal }) => {
        calls++;
        seen = signal;
        return new Promise(() => {});
      },
      { signal: ac.signal },
    );
    const reason = new Error('user left');
    ac.abort(reason);
    await expect(p).rejects.toBe(reason);
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBe(reason);
    expect(calls).toBe(1);
  });

  it('a non-Error reason becomes OperationAbortedError', async () => {
    const run = protect();
    const ac = new AbortController();
    const p = run(() => new Promise(() => {}), { signal: ac.signal });
    ac.abort('bye');
    await expect(p).rejects.toSatisfy(isOperationAbortedError);
  });

  it('abort during backoff stops further attempts at once', async () => {
    const clock = createManualClock();
    const run = protect({
      retry: { attempts: 5, backoff: { baseDelayMs: 1000, maxDelayMs: 1000, jitter: 'none' } },
      clock,
      sleep: clock.sleep,
    });
    const ac = new AbortController();
    let calls = 0;
    const p = run(
      () => {
        calls++;
        throw new Error('fail');
      },
      { signal: ac.signal },
    );
    await clock.advanceAsync(500);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    await clock.advanceAsync(5000);
    expect(calls).toBe(1);
    expect(clock.pending).toBe(0);
  });

  it('without a timeout, fn receives the caller signal itself', async () => {
    const run = protect();
    const ac = new AbortController();
    let seen: AbortSignal | undefined;
    await run(
      ({ signal }) => {
        seen = signal;
      },
      { signal: ac.signal },
    );
    expect(seen).toBe(ac.signal);
  });
});

describe("protect: timeoutMode 'immediate' keeps the concurrency bound at the backend", () => {
  it('operations that ignore their signal never run more than `concurrency` at once', async () => {
    const clock = createManualClock();
    const run = protect({
      retry: { attempts: 3, backoff: { baseDelayMs: 0 } },
      attemptTimeoutMs: 10,
      timeoutMode: 'immediate',
      concurrency: { limit: 2, maxQueue: Number.POSITIVE_INFINITY },
      clock,
      sleep: clock.sleep,
    });
    let running = 0;
    let maxRunning = 0;
    // The backend: answers after 35 ms and ignores the signal, as opossum's capacity bug needs.
    const backend = async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await clock.sleep(35);
      running--;
      return 'late';
    };
    const calls = Array.from({ length: 6 }, () => run(backend));
    const outcomes = await clock.run(Promise.allSettled(calls));
    expect(
      outcomes.every((o) => o.status === 'rejected' && isDeadlineExceededError(o.reason)),
    ).toBe(true);
    expect(maxRunning).toBeLessThanOrEqual(2);
    // The last abandoned attempts still hold their slots until the backend answers.
    expect(run.active).toBe(2);
    await clock.advanceAsync(35);
    expect(run.active).toBe(0);
    // A caller still hears of its deadline at once; the slot is only freed when the backend answers.
    const single = protect({
      attemptTimeoutMs: 10,
      concurrency: { limit: 1 },
      clock,
      sleep: clock.sleep,
    });
    const started = clock.now;
    const late = single(backend).catch((e: unknown) => e);
    await clock.advanceAsync(10);
    expect(isDeadlineExceededError(await late)).toBe(true);
    expect(clock.now - started).toBe(10);
    expect(single.active).toBe(1);
    await expect(single(() => 'refused')).rejects.toSatisfy(isQueueFullError);
    await clock.advanceAsync(25);
    expect(single.active).toBe(0);
    expect(running).toBe(0);
    await expect(single(() => 'next')).resolves.toBe('next');
  });
});
