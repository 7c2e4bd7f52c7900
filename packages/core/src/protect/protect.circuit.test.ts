import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { STANDARD_RESILIENCE } from '../attempts/resilience-options.js';
import { isCircuitOpenError } from '../errors/circuit-open-error.js';
import { isDeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { COUNT_ONLY_CIRCUIT } from '../test-helpers/circuit.js';
import { createManualClock } from '../time/manual-clock.js';
import { protect } from './protect.js';

const fail = () => Promise.reject(new Error('down'));
const ok = () => Promise.resolve('up');

/** A callback whose outcome the test decides later. */
function gate<T>() {
  let resolve: (v: T) => void = () => {};
  let reject: (e: unknown) => void = () => {};
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function setup(extra: Parameters<typeof protect>[0] = {}) {
  const clock = createManualClock();
  const run = protect({
    circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 2, openDurationMs: 1000 },
    clock,
    sleep: clock.sleep,
    ...extra,
  });
  return { clock, run };
}

/** Opens a threshold-2 circuit with two failed calls, then waits out its cooldown. */
async function openThenCool(
  run: ReturnType<typeof protect>,
  clock: ReturnType<typeof createManualClock>,
) {
  await run(fail).catch(() => {});
  await run(fail).catch(() => {});
  clock.advance(1000);
}

describe('protect: circuit', () => {
  it("a queued call's failure is timed from its first attempt, so failures one after another in the queue open the circuit", async () => {
    // A clock far from 0: a duration measured from no start at all would place the send at 0.
    const clock = createManualClock(1_000_000);
    const run = protect({
      circuit: { failureThreshold: 3, failureSpanMs: 300, window: false, openDurationMs: 1000 },
      attemptTimeoutMs: 1000,
      retry: false,
      concurrency: { limit: 1, maxQueue: 10 },
      clock,
      sleep: clock.sleep,
    });
    const sentAt: number[] = [];
    const slowFailure = async () => {
      sentAt.push(clock());
      await clock.sleep(200);
      throw new Error('down');
    };
    // One runs, two wait in the queue: they fail 200 ms apart, each sent after the previous failed.
    const calls = [run(slowFailure), run(slowFailure), run(slowFailure)];
    await clock.run(Promise.allSettled(calls));
    expect(sentAt).toEqual([1_000_000, 1_000_200, 1_000_400]);
    // Three failures at three moments spanning 400 ms: an outage, not one burst.
    expect(run.circuit?.state).toBe('open');
  });

  it('counts once per call after retries, then rejects new calls without running', async () => {
    const { run } = setup({ retry: { attempts: 3, backoff: { baseDelayMs: 0 } } });
    let calls = 0;
    const counted = () => {
      calls++;
      return fail();
    };
    await expect(run(counted)).rejects.toThrow('down');
    expect(run.circuit?.state).toBe('closed'); // 3 failed attempts = one counted failure
    await expect(run(counted)).rejects.toThrow('down');
    expect(run.circuit?.state).toBe('open');
    expect(calls).toBe(6);
    const error = await run(counted).catch((e: unknown) => e);
    expect(isCircuitOpenError(error)).toBe(true);
    expect((error as { retryAfterMs: number }).retryAfterMs).toBe(1000);
    expect(calls).toBe(6);
  });

  it('after the cooldown exactly one probe runs; others reject until it finishes; success closes', async () => {
    const { clock, run } = setup();
    await openThenCool(run, clock);
    const probe = gate<string>();
    const p = run(() => probe.promise);
    let others = 0;
    for (let i = 0; i < 3; i++) {
      await expect(run(() => ++others)).rejects.toSatisfy(isCircuitOpenError);
    }
    expect(others).toBe(0);
    probe.resolve('probe ok');
    await expect(p).resolves.toBe('probe ok');
    expect(run.circuit?.state).toBe('closed');
    await expect(run(ok)).resolves.toBe('up');
  });

  it('the probe runs under its timeout and is never retried: the caller gets its error', async () => {
    const { clock, run } = setup({
      retry: { attempts: 3, backoff: { baseDelayMs: 0 } },
      attemptTimeoutMs: 100,
    });
    await openThenCool(run, clock);
    const attempts: number[] = [];
    const p = run(({ attempt }) => {
      attempts.push(attempt);
      return attempt === 1 ? new Promise(() => {}) : 'second';
    });
    await expect(clock.run(p)).rejects.toThrow(/deadline|timed out|100/i);
    // One attempt: a retried probe would hit a recovering upstream with a burst.
    expect(attempts).toEqual([1]);
    expect(run.circuit?.state).toBe('open');
    // A call admitted while closed still gets its retries.
    clock.advance(1000);
    const probe = run(() => 'up');
    await expect(probe).resolves.toBe('up');
    attempts.length = 0;
    const p2 = run(({ attempt }) => {
      attempts.push(attempt);
      return attempt === 1 ? Promise.reject(new Error('once')) : 'second';
    });
    await expect(clock.run(p2)).resolves.toBe('second');
    expect(attempts).toEqual([1, 2]);
  });

  it('property: a probe makes exactly one attempt, whatever the retry settings and outcomes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 10 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }),
        async (attempts, probeFails) => {
          const { clock, run } = setup({ retry: { attempts, backoff: { baseDelayMs: 0 } } });
          await openThenCool(run, clock);
          for (const fails of probeFails) {
            expect(run.circuit?.state).not.toBe('closed');
            let made = 0;
            const p = run(() => {
              made++;
              return fails ? fail() : ok();
            });
            await clock.run(p).catch(() => {});
            expect(made).toBe(1);
            if (!fails) break;
            expect(run.circuit?.state).toBe('open');
            clock.advance(1000);
          }
        },
      ),
      { seed: 42, numRuns: 100 },
    );
  });

  it('a probe that never reached the upstream (neverSent) is neutral: the next call probes at once', async () => {
    const { clock, run } = setup({ classify: () => ({ neverSent: true }) });
    await openThenCool(run, clock);
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    await expect(run(() => Promise.reject(refused))).rejects.toBe(refused);
    expect(run.circuit?.state).toBe('half-open');
    await expect(run(ok)).resolves.toBe('up');
    expect(run.circuit?.state).toBe('closed');
  });

  it('a failed probe re-opens for a full cooldown', async () => {
    const { clock, run } = setup();
    await openThenCool(run, clock);
    const probe = gate<string>();
    const p = run(() => probe.promise);
    clock.advance(400); // the probe is slow; the new cooldown starts when it fails
    probe.reject(new Error('still down'));
    await expect(p).rejects.toThrow('still down');
    expect(run.circuit?.state).toBe('open');
    clock.advance(999);
    await expect(run(ok)).rejects.toSatisfy(isCircuitOpenError);
    clock.advance(1);
    await expect(run(ok)).resolves.toBe('up');
  });

  it('a neutral probe (countForCircuit false) lets the next call probe at once', async () => {
    const { clock, run } = setup();
    await openThenCool(run, clock);
    await expect(
      run(() => Promise.reject(new Error('not found')), {
        classify: () => ({ countForCircuit: false }),
      }),
    ).rejects.toThrow('not found');
    expect(run.circuit?.state).toBe('half-open');
    await expect(run(ok)).resolves.toBe('up');
    expect(run.circuit?.state).toBe('closed');
  });

  it('a neutral probe (external abort) lets the next call probe at once', async () => {
    const { clock, run } = setup();
    await openThenCool(run, clock);
    const ac = new AbortController();
    const p = run(() => new Promise(() => {}), { signal: ac.signal });
    await expect(run(ok)).rejects.toSatisfy(isCircuitOpenError);
    ac.abort(new Error('caller gave up'));
    await expect(p).rejects.toThrow('caller gave up');
    await expect(run(ok)).resolves.toBe('up');
  });

  it('a neutral probe (throwing policy) lets the next call probe at once', async () => {
    const { clock, run } = setup();
    await openThenCool(run, clock);
    await expect(
      run(fail, {
        classify: () => {
          throw new Error('bad policy');
        },
      }),
    ).rejects.toThrow('errorPolicy threw');
    await expect(run(ok)).resolves.toBe('up');
  });

  it('countForCircuit false and external cancellation never open the circuit', async () => {
    const { run } = setup();
    for (let i = 0; i < 5; i++) {
      await run(fail, { classify: () => ({ countForCircuit: false }) }).catch(() => {});
      const ac = new AbortController();
      const p = run(() => new Promise(() => {}), { signal: ac.signal });
      ac.abort();
      await p.catch(() => {});
    }
    expect(run.circuit?.state).toBe('closed');
  });

  it('the circuit admits before the queue: an open circuit refuses without queueing, an admitted call runs when its slot frees', async () => {
    const { run } = setup({
      concurrency: { limit: 1, maxQueue: 5 },
      circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 1000 },
    });
    const first = gate<string>();
    const a = run(() => first.promise);
    let ran = 0;
    const b = run(() => ++ran);
    expect(run.queued).toBe(1);
    first.reject(new Error('down'));
    await expect(a).rejects.toThrow('down');
    await expect(b).resolves.toBe(1);
    expect(run.circuit?.state).toBe('open');
    const blocker = gate<string>();
    void run(() => blocker.promise).catch(() => {});
    await expect(run(() => ++ran)).rejects.toSatisfy(isCircuitOpenError);
    expect(run.queued).toBe(0);
    expect(ran).toBe(1);
  });

  it('onStateChange and onReject report transitions and refusals without payloads', async () => {
    const { run } = setup({
      circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 1000 },
    });
    const changes: string[] = [];
    const rejects: unknown[] = [];
    run.onStateChange((e) => changes.push(`${e.from}->${e.to}`));
    run.onReject((e) => rejects.push(e));
    await run(fail).catch(() => {});
    await run(ok).catch(() => {});
    expect(changes).toEqual(['closed->open']);
    expect(rejects).toEqual([{ reason: 'circuit-open' }]);
  });

  it('circuit: false disables it', async () => {
    const run = protect({ circuit: false });
    for (let i = 0; i < 10; i++) await run(fail).catch(() => {});
    expect(run.circuit).toBeUndefined();
    await expect(run(ok)).resolves.toBe('up');
  });

  describe('the standard circuit under healthy load (issue 19 soak)', () => {
    const standard = (clock: ReturnType<typeof createManualClock>) =>
      protect({
        ...STANDARD_RESILIENCE,
        retry: false,
        timeoutMs: 1_000,
        clock,
        sleep: clock.sleep,
      });

    it('stays closed through a 1 s event-loop stall: the failure before it and the deadlines fired after it are two moments, not an outage', async () => {
      const clock = createManualClock();
      const run = standard(clock);
      await run(ok);
      await run(fail).catch(() => {});
      // 64 calls in flight whose answers reach the socket during the stall.
      const answers = Array.from({ length: 64 }, () => gate<string>());
      const calls = answers.map((g) => run(() => g.promise).catch((e: unknown) => e));
      // The stall: nothing runs for 1 s, then every deadline timer fires in one timers phase,
      // before the poll phase reads the answers.
      clock.advance(1_000);
      const errors = await Promise.all(calls);
      expect(errors.every(isDeadlineExceededError)).toBe(true);
      for (const g of answers) g.resolve('up');
      expect(run.circuit?.state).toBe('closed');
      await expect(run(ok)).resolves.toBe('up');
    });

    it('stays closed when a starved process takes 5 ms per failure of the calls it had in flight: they were all sent before the streak began', async () => {
      const clock = createManualClock();
      const run = standard(clock);
      await run(ok);
      const answers = Array.from({ length: 64 }, () => gate<string>());
      const calls = answers.map((g) => run(() => g.promise).catch((e: unknown) => e));
      await run(fail).catch(() => {});
      // A 600 ms stall, then the in-flight calls fail one by one (a dropped connection worked
      // through slowly): 64 failures over 320 ms, the clock moving on between them, all before
      // the calls' 1 s deadline.
      clock.advance(600);
      for (const g of answers) {
        g.reject(new Error('connection reset'));
        await new Promise<void>((resolve) => setImmediate(resolve));
        clock.advance(5);
      }
      await Promise.all(calls);
      expect(run.circuit?.state).toBe('closed');
      await expect(run(ok)).resolves.toBe('up');
    });

    it('still opens when every call fails, within half a second, one or 64 at a time', async () => {
      const openedAt: number[] = [];
      for (const concurrency of [1, 64]) {
        const clock = createManualClock();
        const run = standard(clock);
        while (run.circuit?.state === 'closed') {
          clock.advance(10);
          await Promise.all(Array.from({ length: concurrency }, () => run(fail).catch(() => {})));
        }
        openedAt.push(clock());
      }
      // One at a time: the streak needs its span (10 ms to 510 ms). 64 at a time: the
      // failure-rate window has its 100 calls by the second round, but judges failures
      // only once they fell at 5 moments 100 ms apart (10, 110, …, 410 ms): a burst at one
      // moment could be the calls in flight through a stall.
      expect(openedAt).toEqual([510, 410]);
    });
  });
});
