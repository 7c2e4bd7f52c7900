import { describe, expect, it } from 'vitest';
import { DeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { createManualClock } from '../time/manual-clock.js';
import { protect } from './protect.js';
import type { ProtectContext } from './types.js';

// Calls of one runner share its state (circuit, pool, wheel, derived timeout): nothing a caller
// can see may carry over from one call to the next.
describe('protect: calls of one runner stay apart', () => {
  it('a context kept after its call keeps its own attempt and signal while later calls run', async () => {
    const clock = createManualClock();
    const run = protect({ attemptTimeoutMs: 100, clock, sleep: clock.sleep });
    let first: ProtectContext | undefined;
    await run(async (ctx) => {
      first = ctx;
      return 1;
    });
    const caller = new AbortController();
    let second: ProtectContext | undefined;
    const p = run(
      (ctx) => {
        second = ctx;
        return new Promise(() => {});
      },
      { signal: caller.signal },
    );
    const settled = p.catch((e: unknown) => e);
    caller.abort(new Error('caller'));
    expect(await settled).toEqual(new Error('caller'));
    expect(second).not.toBe(first);
    expect(second?.signal.aborted).toBe(true);
    expect(first?.attempt).toBe(1);
    expect(first?.signal.aborted).toBe(false);
  });

  it('an untimed context keeps its own caller signal', async () => {
    const run = protect({});
    const a = new AbortController();
    let kept: ProtectContext | undefined;
    await run(
      async (ctx) => {
        kept = ctx;
        return 1;
      },
      { signal: a.signal },
    );
    const b = new AbortController();
    const p = run(() => new Promise(() => {}), { signal: b.signal });
    const settled = p.catch((e: unknown) => e);
    b.abort(new Error('b'));
    await settled;
    expect(kept?.signal).toBe(a.signal);
    expect(kept?.signal.aborted).toBe(false);
  });

  it('a call whose timed-out attempt still runs is not reused: its late answer reaches no later call', async () => {
    const clock = createManualClock();
    const run = protect({ attemptTimeoutMs: 100, clock, sleep: clock.sleep });
    let answerLate: (value: string) => void = () => {};
    const timedOut = run(() => new Promise<string>((resolve) => (answerLate = resolve))).catch(
      (e: unknown) => e,
    );
    await clock.advanceAsync(100);
    expect(await timedOut).toBeInstanceOf(DeadlineExceededError);
    // Several calls, so a reused object would certainly be among them.
    const answers: ((value: string) => void)[] = [];
    const later = [1, 2, 3].map(() => run(() => new Promise<string>((r) => answers.push(r))));
    answerLate('late');
    await clock.flush();
    for (const [i, answer] of answers.entries()) answer(`call ${i + 1}`);
    await expect(Promise.all(later)).resolves.toEqual(['call 1', 'call 2', 'call 3']);
  });

  it('a call waiting to retry is not reused: its retry runs its own operation, once', async () => {
    const clock = createManualClock();
    const run = protect({
      retry: { attempts: 2, backoff: { baseDelayMs: 100, maxDelayMs: 100, jitter: 'none' } },
      clock,
      sleep: clock.sleep,
    });
    const calls: string[] = [];
    const a = run(async ({ attempt }) => {
      calls.push(`a${attempt}`);
      if (attempt === 1) throw new Error('a failed');
      return 'a';
    });
    await clock.flush();
    const others = [1, 2, 3].map((i) =>
      run(async ({ attempt }) => {
        calls.push(`b${i}.${attempt}`);
        return `b${i}`;
      }),
    );
    await expect(Promise.all(others)).resolves.toEqual(['b1', 'b2', 'b3']);
    await expect(clock.run(a)).resolves.toBe('a');
    expect(calls.sort()).toEqual(['a1', 'a2', 'b1.1', 'b2.1', 'b3.1']);
  });

  it("a call's fallback and classifier are its own, not those of the call before it", async () => {
    const run = protect({ retry: { attempts: 2, backoff: { baseDelayMs: 0, jitter: 'none' } } });
    await expect(
      run(async () => 'ok', { fallback: () => 'fallback', classify: () => ({ retry: false }) }),
    ).resolves.toBe('ok');
    let attempts = 0;
    await expect(
      run(async () => {
        attempts++;
        throw new Error('down');
      }),
    ).rejects.toThrow('down');
    expect(attempts).toBe(2);
  });

  it('a call reused after a success starts with a fresh deadline and attempt count', async () => {
    const clock = createManualClock();
    const run = protect({
      timeoutMs: 1000,
      retry: { attempts: 3, backoff: { baseDelayMs: 600, maxDelayMs: 600, jitter: 'none' } },
      clock,
      sleep: clock.sleep,
    });
    await run(async () => 1);
    await clock.advanceAsync(5000);
    const seen: number[] = [];
    const p = run(async ({ attempt }) => {
      seen.push(attempt);
      throw new Error(`attempt ${attempt}`);
    });
    // 1000 ms from this call's start: attempts at 0 and 600; a third would start at 1200, past
    // the deadline, so the engine stops after the second and the caller gets its error.
    await expect(clock.run(p)).rejects.toThrow('attempt 2');
    expect(seen).toEqual([1, 2]);
  });
});
