import { describe, expect, it } from 'vitest';
import { sharedTimerWheel, TimerWheel } from '../deadline/timer-wheel.js';
import { isDeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { isDeadlineTimerError } from '../errors/deadline-timer-error.js';
import { neverAbortedSignal } from '../internal/abort.js';
import { createManualClock } from '../time/manual-clock.js';
import { attemptWithTimeout } from './attempt.js';
import type { RouteContext, RouteOperation } from './types.js';

type Op = RouteOperation<string, unknown>;

/** Runs `op` as attempt 1 of provider 'a' with a 50 ms timeout, unless told otherwise. */
const start = (
  op: Op,
  wheel: TimerWheel,
  o: { parent?: AbortSignal; wait?: boolean; attempt?: number; timeoutMs?: number } = {},
): Promise<unknown> =>
  attemptWithTimeout(
    op,
    'res',
    o.parent ?? neverAbortedSignal,
    'a',
    o.attempt ?? 1,
    o.timeoutMs ?? 50,
    o.wait ?? false,
    wheel,
  );

const setup = () => {
  const clock = createManualClock(0);
  return { clock, wheel: new TimerWheel({ now: clock, sleep: clock.sleep }) };
};

describe('attemptWithTimeout', () => {
  it("'immediate' rejects at the deadline, aborts the op's signal with it and absorbs the late rejection", async () => {
    const { clock, wheel } = setup();
    let seen: RouteContext | undefined;
    const p = start(
      (_r, ctx) => {
        seen = ctx;
        return new Promise((_, reject) =>
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
        );
      },
      wheel,
      { attempt: 2 },
    );
    const error = await clock.run(p).catch((e: unknown) => e);
    expect(isDeadlineExceededError(error)).toBe(true);
    expect(clock()).toBe(50);
    expect(seen?.signal.reason).toBe(error);
    expect([seen?.providerId, seen?.attempt]).toEqual(['a', 2]);
    expect([wheel.size, clock.pending]).toEqual([0, 0]);
  });

  it("'wait' waits for the op to settle, then fails with the deadline", async () => {
    const { clock, wheel } = setup();
    const p = start(
      async () => {
        await clock.sleep(200);
        return 'late';
      },
      wheel,
      { wait: true },
    );
    const error = await clock.run(p).catch((e: unknown) => e);
    expect(isDeadlineExceededError(error)).toBe(true);
    expect(clock()).toBe(200);
  });

  it('a success before the deadline leaves no sleep, no wheel entry and no parent listener', async () => {
    const { clock, wheel } = setup();
    const parent = new AbortController();
    let signal: AbortSignal | undefined;
    const p = start(
      async (_r, ctx) => {
        signal = ctx.signal;
        await clock.sleep(10);
        return 'ok';
      },
      wheel,
      { parent: parent.signal },
    );
    await expect(clock.run(p)).resolves.toBe('ok');
    expect([wheel.size, clock.pending]).toEqual([0, 0]);
    parent.abort(new Error('later'));
    expect(signal?.aborted).toBe(false);
  });

  it("passes the parent's abort to the op's signal while it runs; a sync throw rejects", async () => {
    const { clock, wheel } = setup();
    const parent = new AbortController();
    const reason = new Error('caller gone');
    const p = start(
      (_r, ctx) =>
        new Promise((_, reject) =>
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
        ),
      wheel,
      { parent: parent.signal },
    );
    parent.abort(reason);
    await expect(p).rejects.toBe(reason);
    const boom = new Error('sync');
    const q = start(() => {
      throw boom;
    }, wheel);
    await expect(q).rejects.toBe(boom);
    expect([wheel.size, clock.pending]).toEqual([0, 0]);
  });

  it('fails with DeadlineTimerError (cause: the sleep error) when the sleep rejects', async () => {
    const cause = new Error('timer broken');
    const wheel = new TimerWheel({ now: () => 0, sleep: () => Promise.reject(cause) });
    let signal: AbortSignal | undefined;
    const p = start((_r, ctx) => {
      signal = ctx.signal;
      return new Promise(() => {});
    }, wheel);
    const error = (await p.catch((e: unknown) => e)) as Error;
    expect(isDeadlineTimerError(error)).toBe(true);
    expect(error.cause).toBe(cause);
    expect(signal?.reason).toBe(error);
  });

  it('on the host timer, attempts of one slot each get a signal of their own, quiet for winners', async () => {
    // A host-timer wheel with time pinned, so both attempts fall due in the same slot.
    const wheel = new TimerWheel({ now: () => 1000 });
    const signals: AbortSignal[] = [];
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Both attempts are in flight at once (a slot's signal lives while a member is pending).
    const op = async (_r: string, ctx: RouteContext) => {
      signals.push(ctx.signal);
      await released;
      return 'ok';
    };
    const run = (parent: AbortSignal) =>
      attemptWithTimeout(op, 'res', parent, 'a', 1, 60_000, false, wheel);
    const both = Promise.all([run(neverAbortedSignal), run(neverAbortedSignal)]);
    release();
    await both;
    expect(signals[0]).not.toBe(signals[1]);
    expect(signals[1]?.aborted).toBe(false);
    expect(signals[0]?.aborted).toBe(false);
    // A caller signal gets a linked signal of its own.
    await run(new AbortController().signal);
    expect(signals[2]).not.toBe(signals[0]);
    expect(wheel.size).toBe(0);
  });

  it('on the host timer, a timed-out attempt fails with DeadlineExceededError', async () => {
    let signal: AbortSignal | undefined;
    const p = start(
      (_r, ctx) => {
        signal = ctx.signal;
        return new Promise(() => {});
      },
      sharedTimerWheel,
      { timeoutMs: 5 },
    );
    const error = await p.catch((e: unknown) => e);
    expect(isDeadlineExceededError(error)).toBe(true);
    expect(signal?.reason).toBe(error);
    expect(sharedTimerWheel.size).toBe(0);
  });
});
