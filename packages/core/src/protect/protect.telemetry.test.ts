import { describe, expect, it } from 'vitest';
import type { CallTelemetry, Telemetry } from '../attempts/telemetry.js';
import { createRouter } from '../routing/router.js';
import { createManualClock } from '../time/manual-clock.js';
import { protect } from './protect.js';

class FlakyError extends Error {
  override name = 'FlakyError';
}

/**
 * A telemetry that writes down every hook told, with its arguments; `fused`: it has
 * `firstAttemptSucceeded`; `firstAttemptAtStart`: its option of that name.
 */
function recording(fused: boolean, firstAttemptAtStart?: boolean) {
  const told: string[] = [];
  const call: CallTelemetry = {
    attemptStart: (n, now) => told.push(`attemptStart ${n} @${now}`),
    attemptEnd: (n, outcome, type, now) => told.push(`attemptEnd ${n} ${outcome} ${type} @${now}`),
    retry: (n, delay, reason) => told.push(`retry ${n} ${delay} ${reason}`),
    end: (outcome, attempts, type, now) => told.push(`end ${outcome} ${attempts} ${type} @${now}`),
  };
  if (fused) call.firstAttemptSucceeded = (now) => told.push(`firstAttemptSucceeded @${now}`);
  const telemetry: Telemetry = {
    startCall: (_target, now) => {
      told.push(`startCall @${now}`);
      return call;
    },
    ...(firstAttemptAtStart === undefined ? {} : { firstAttemptAtStart }),
  };
  return { told, telemetry };
}

/**
 * protect with one retry and a bulkhead of one (queue one) over a recording telemetry: a call that
 * succeeds after 7 ms, then one whose first attempt fails; returns what each told, and the stack.
 */
async function successThenRetried(firstAttemptAtStart?: boolean) {
  const clock = createManualClock();
  const { told, telemetry } = recording(true, firstAttemptAtStart);
  const run = protect({
    retry: { attempts: 2, backoff: { baseDelayMs: 1, jitter: 'none' } },
    attemptTimeoutMs: 1_000,
    concurrency: { limit: 1, maxQueue: 1 },
    clock,
    sleep: clock.sleep,
    telemetry,
  });
  await run(async () => {
    clock.advance(7);
    return 'ok';
  });
  const success = told.splice(0);
  let n = 0;
  const retried = run(async () => {
    if (++n === 1) throw new FlakyError('x');
    return 'ok';
  });
  await clock.advanceAsync(1);
  await retried;
  return { clock, run, told, success, retried: told.splice(0) };
}

/** A router of two providers over a recording telemetry: a request `a` answers in 4 ms, then one `a` fails and `b` answers. */
async function answeredThenFailedOver(firstAttemptAtStart?: boolean) {
  const clock = createManualClock();
  const { told, telemetry } = recording(true, firstAttemptAtStart);
  const router = createRouter({
    providers: [
      { id: 'a', resource: 'a' },
      { id: 'b', resource: 'b' },
    ],
    clock,
    sleep: clock.sleep,
    telemetry,
  });
  await router.execute(async () => {
    clock.advance(4);
    return 'ok';
  });
  const answered = told.splice(0);
  await router.execute(async (resource) => {
    clock.advance(1);
    if (resource === 'a') throw new FlakyError('x');
    return 'ok';
  });
  return { answered, failedOver: told.splice(0) };
}

describe('telemetry hooks on the success path', () => {
  it('protect: a first attempt that succeeds is told in one hook, from the attempt’s end reading; a retried call hears each attempt and its end', async () => {
    const { success, retried } = await successThenRetried();
    expect(success).toEqual(['startCall @0', 'attemptStart 1 @0', 'firstAttemptSucceeded @7']);
    expect(retried).toEqual([
      'startCall @7',
      'attemptStart 1 @7',
      'attemptEnd 1 failure FlakyError @7',
      'retry 1 1 FlakyError',
      'attemptStart 2 @8',
      'attemptEnd 2 success undefined @8',
      'end success 2 undefined @8',
    ]);
  });

  it('a telemetry without firstAttemptSucceeded hears attemptEnd then end, with the same reading', async () => {
    const clock = createManualClock();
    const { told, telemetry } = recording(false);
    const run = protect({ clock, telemetry });
    await run(async () => {
      clock.advance(3);
      return 'ok';
    });
    expect(told).toEqual([
      'startCall @0',
      'attemptStart 1 @0',
      'attemptEnd 1 success undefined @3',
      'end success 1 undefined @3',
    ]);
  });

  it('router: a request its first visit answers is told in one hook; one that failed over hears each visit', async () => {
    const { answered, failedOver } = await answeredThenFailedOver();
    expect(answered).toEqual(['startCall @0', 'attemptStart 1 @0', 'firstAttemptSucceeded @4']);
    expect(failedOver).toEqual([
      'startCall @4',
      'attemptStart 1 @4',
      'attemptEnd 1 failure FlakyError @5',
      'attemptStart 2 @5',
      'attemptEnd 2 success undefined @6',
      'end success 2 undefined @6',
    ]);
  });

  it('firstAttemptAtStart: protect tells attempt 1’s start only when it is not the call’s (a queued call); later attempts always', async () => {
    const { clock, run, told, success, retried } = await successThenRetried(true);
    expect(success).toEqual(['startCall @0', 'firstAttemptSucceeded @7']);
    expect(retried).toEqual([
      'startCall @7',
      'attemptEnd 1 failure FlakyError @7',
      'retry 1 1 FlakyError',
      'attemptStart 2 @8',
      'attemptEnd 2 success undefined @8',
      'end success 2 undefined @8',
    ]);
    let release = () => {};
    const holding = run(
      () =>
        new Promise<string>((r) => {
          release = () => r('held');
        }),
    );
    const queued = run(async () => 'queued');
    clock.advance(5);
    release();
    await holding;
    await queued;
    expect(told).toEqual([
      'startCall @8',
      'startCall @8',
      'firstAttemptSucceeded @13',
      'attemptStart 1 @13',
      'firstAttemptSucceeded @13',
    ]);
  });

  it('firstAttemptAtStart: the router tells visit 1’s start only when it is not the request’s; a failover’s visit always', async () => {
    const { answered, failedOver } = await answeredThenFailedOver(true);
    expect(answered).toEqual(['startCall @0', 'firstAttemptSucceeded @4']);
    expect(failedOver).toEqual([
      'startCall @4',
      'attemptEnd 1 failure FlakyError @5',
      'attemptStart 2 @5',
      'attemptEnd 2 success undefined @6',
      'end success 2 undefined @6',
    ]);
  });
});
