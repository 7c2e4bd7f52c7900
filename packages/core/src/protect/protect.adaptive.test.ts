import { describe, expect, it } from 'vitest';
import type { Telemetry } from '../attempts/telemetry.js';
import { isConcurrencyLimitError } from '../errors/concurrency-limit-error.js';
import { isDeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import type { AdaptiveLimiter } from '../limit/adaptive-limiter.js';
import { createInboundCall, runInbound } from '../node.js';
import { tick } from '../test-helpers/async.js';
import { createManualClock } from '../time/manual-clock.js';
import { protect } from './protect.js';

/** A call that stays in flight until `answer()` (or `fail(error)`) is called. */
function pending() {
  let answer: () => void = () => {};
  let fail: (error: unknown) => void = () => {};
  const promise = new Promise<string>((resolve, reject) => {
    answer = () => resolve('ok');
    fail = reject;
  });
  return { promise, answer: () => answer(), fail: (e: unknown) => fail(e) };
}

/** A runner that has seen its no-load latency: two calls of 10 ms each. */
async function adaptiveRunner(adaptive: object, attemptTimeoutMs?: number) {
  const clock = createManualClock();
  let limiter: AdaptiveLimiter | undefined;
  const telemetry: Telemetry = {
    startCall: () => undefined,
    concurrencyLimit: (l) => {
      limiter = l;
    },
  };
  const run = protect({
    concurrency: { adaptive: { probeSamples: 2, ...adaptive } },
    clock,
    sleep: clock.sleep,
    telemetry,
    ...(attemptTimeoutMs === undefined ? {} : { attemptTimeoutMs }),
  });
  for (let i = 0; i < 2; i++) {
    const call = pending();
    const done = run(() => call.promise);
    clock.advance(10);
    call.answer();
    await done;
  }
  return { run, clock, limiter: limiter as AdaptiveLimiter };
}

describe('protect: concurrency.adaptive', () => {
  it('refuses the call over the limit with ConcurrencyLimitError, without running it', async () => {
    const { run, limiter } = await adaptiveRunner({ initialLimit: 2 });
    expect(limiter.limit).toBe(2);
    const rejects: unknown[] = [];
    run.onReject((e) => rejects.push(e));
    const calls = [pending(), pending()];
    const running = calls.map((c) => run(() => c.promise, { criticality: 'critical' }));
    let ran = false;
    const error = await run(
      () => {
        ran = true;
      },
      { criticality: 'critical' },
    ).catch((e: unknown) => e);
    expect(isConcurrencyLimitError(error)).toBe(true);
    expect(ran).toBe(false);
    expect(rejects).toEqual([{ reason: 'concurrency-limit' }]);
    // A fallback replaces the refusal, as it does a full queue's.
    await expect(
      run(() => 'never', { criticality: 'critical', fallback: () => 'cached' }),
    ).resolves.toBe('cached');
    for (const c of calls) c.answer();
    await Promise.all(running);
    expect(run.active).toBe(0);
  });

  it('sheds sheddable calls before default ones, and default before critical', async () => {
    const { run } = await adaptiveRunner({ initialLimit: 10 });
    const held = Array.from({ length: 5 }, () => pending());
    const running = held.map((c) => run(() => c.promise));
    const outcome = (criticality: 'critical' | 'default' | 'sheddable') =>
      run(() => 'ran', { criticality }).then(
        () => 'admitted',
        (e: unknown) => (isConcurrencyLimitError(e) ? e.criticality : 'other'),
      );
    // 5 of 10 in flight: sheddable calls may fill only half the limit.
    await expect(outcome('sheddable')).resolves.toBe('sheddable');
    await expect(outcome('default')).resolves.toBe('admitted');
    await expect(outcome('critical')).resolves.toBe('admitted');
    for (const c of held) c.answer();
    await Promise.all(running);
  });

  it("a call with no criticality of its own takes the inbound call's (it travels across hops)", async () => {
    const { run } = await adaptiveRunner({ initialLimit: 10 });
    const held = Array.from({ length: 5 }, () => pending());
    const running = held.map((c) => run(() => c.promise));
    const inbound = (criticality: 'critical' | 'sheddable') =>
      createInboundCall({ signal: new AbortController().signal, deadline: undefined, criticality });
    const outcome = (criticality: 'critical' | 'sheddable') =>
      runInbound(inbound(criticality), () =>
        run(() => 'ran').then(
          () => 'admitted',
          (e: unknown) => (isConcurrencyLimitError(e) ? e.criticality : 'other'),
        ),
      );
    await expect(outcome('sheddable')).resolves.toBe('sheddable');
    await expect(outcome('critical')).resolves.toBe('admitted');
    for (const c of held) c.answer();
    await Promise.all(running);
  });

  it('a call its caller aborts, or that is refused further in, gives its slot back', async () => {
    const { run, limiter } = await adaptiveRunner({ initialLimit: 2 });
    const controller = new AbortController();
    const call = pending();
    const aborted = run(() => call.promise, { signal: controller.signal });
    expect(limiter.inFlight).toBe(1);
    controller.abort();
    await expect(aborted).rejects.toThrow();
    await tick();
    expect(limiter.inFlight).toBe(0);
    expect(limiter.limit).toBe(2);
    call.answer();
  });

  it('a call that times out is a drop: the limit is cut by backoffRatio', async () => {
    const { run, clock, limiter } = await adaptiveRunner(
      { initialLimit: 10, backoffRatio: 0.5 },
      50,
    );
    const call = pending();
    const slow = run(() => call.promise).catch((e: unknown) => e);
    await clock.advanceAsync(50);
    expect(isDeadlineExceededError(await slow)).toBe(true);
    // The abandoned attempt still runs at the backend: it keeps its slot until it settles.
    expect(limiter.inFlight).toBe(1);
    call.answer();
    await tick();
    expect(limiter.inFlight).toBe(0);
    expect(limiter.limit).toBe(5);
  });

  it('an invalid criticality is a TypeError naming the per-call option', () => {
    const run = protect({ concurrency: { adaptive: true } });
    expect(() => run(() => 1, { criticality: 'low' as never })).toThrow(
      "protect run options.criticality must be one of 'critical', 'default', 'sheddable'",
    );
  });
});
