import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withTimeout } from './deadline/with-timeout.js';
import { createPool } from './pool/pool.js';
import { protect } from './protect/protect.js';
import { withRetry } from './retry/with-retry.js';
import { createRouter } from './routing/router.js';
import { trackProcessFaults } from './test-helpers/unhandled.js';
import { createManualClock, type ManualClock } from './time/manual-clock.js';

// Every call of every runner settles exactly once — a synchronous TypeError for invalid per-call
// options, else one settlement of its promise — whatever its operation does (sync throws, async
// rejections, hostile thenables, hangs that ignore the signal) and whenever the caller aborts; no
// unhandled rejection or uncaught exception; afterwards every slot is free and a good call succeeds.

const process = trackProcessFaults();

const TIMEOUT = 30;

type Behaviour =
  | { kind: 'ok-sync' | 'throw-sync' | 'hostile-getter' | 'hostile-method' }
  | { kind: 'ok-async' | 'reject-async' | 'hang-ignoring-signal'; ms: number };

const behaviourArb: fc.Arbitrary<Behaviour> = fc.oneof(
  fc.record({
    kind: fc.constantFrom(
      'ok-sync' as const,
      'throw-sync' as const,
      'hostile-getter' as const,
      'hostile-method' as const,
    ),
  }),
  fc.record({
    kind: fc.constantFrom(
      'ok-async' as const,
      'reject-async' as const,
      'hang-ignoring-signal' as const,
    ),
    ms: fc.integer({ min: 0, max: 3 * TIMEOUT }),
  }),
);

type Api = 'protect' | 'withRetry' | 'withTimeout' | 'router' | 'pool';

const callArb = fc.record({
  api: fc.constantFrom<Api>('protect', 'withRetry', 'withTimeout', 'router', 'pool'),
  startAt: fc.integer({ min: 0, max: 60 }),
  abortAt: fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }),
  attempts: fc.array(behaviourArb, { minLength: 2, maxLength: 2 }),
  bad: fc.option(fc.constantFrom('signal', 'fallback', 'classify', 'options'), {
    nil: undefined,
  }),
});

type Call = typeof callArb extends fc.Arbitrary<infer C> ? C : never;

/** What the operation of `call` does on attempt `n` (1-based), in virtual time. */
function operate(clock: ManualClock, b: Behaviour, signal: AbortSignal): unknown {
  const boom = new Error(b.kind);
  switch (b.kind) {
    case 'ok-sync':
      return 'ok';
    case 'throw-sync':
      throw boom;
    case 'hostile-getter':
      return Object.defineProperty({}, 'then', {
        get() {
          throw boom;
        },
      });
    case 'hostile-method':
      return Object.defineProperty({}, 'then', {
        value() {
          throw boom;
        },
      });
    case 'ok-async':
      return clock.sleep(b.ms, signal).then(() => 'ok');
    case 'reject-async':
      return clock.sleep(b.ms, signal).then(() => Promise.reject(boom));
    case 'hang-ignoring-signal':
      return clock.sleep(b.ms).then(() => 'late');
  }
}

/** Per-call options made invalid the way `bad` says (the APIs without such an option get a bad signal). */
function badOptions(bad: NonNullable<Call['bad']>, api: Api): unknown {
  if (bad === 'options' && api !== 'withRetry' && api !== 'withTimeout') return 7;
  if ((bad === 'fallback' || bad === 'classify') && (api === 'protect' || api === 'router')) {
    return { [bad]: 1 };
  }
  return { signal: {} };
}

function runners(clock: ManualClock) {
  const run = protect({
    retry: { attempts: 2, backoff: { baseDelayMs: 0 } },
    attemptTimeoutMs: TIMEOUT,
    concurrency: { limit: 2, maxQueue: 3 },
    clock,
    sleep: clock.sleep,
  });
  const router = createRouter({
    providers: [
      { id: 'a', resource: 'a' },
      { id: 'b', resource: 'b' },
    ],
    protection: { retry: { attempts: 2, backoff: { baseDelayMs: 0 } }, attemptTimeoutMs: TIMEOUT },
    concurrency: { limit: 2, maxQueue: 3 },
    clock,
    sleep: clock.sleep,
  });
  const pool = createPool({ concurrency: 2, maxQueue: 3 });
  return { run, router, pool };
}

type Runners = ReturnType<typeof runners>;

/** Starts `call`; returns its promise, or throws synchronously as the API does. */
function start(clock: ManualClock, r: Runners, call: Call, signal: AbortSignal): Promise<unknown> {
  const behaviour = (attempt: number) =>
    call.attempts[(attempt - 1) % call.attempts.length] as Behaviour;
  let n = 0;
  const op = (s: AbortSignal) => operate(clock, behaviour(++n), s);
  if (call.bad !== undefined) {
    const options = badOptions(call.bad, call.api) as never;
    const timed = { timeoutMs: TIMEOUT, sleep: clock.sleep, ...(options as object) };
    switch (call.api) {
      case 'protect':
        return r.run(() => 1, options);
      case 'router':
        return r.router.execute(() => 1, options);
      case 'pool':
        return r.pool.run(() => 1, options);
      case 'withTimeout':
        return withTimeout(() => 1, timed);
      case 'withRetry':
        return withRetry(() => 1, { sleep: clock.sleep, ...(options as object) });
    }
  }
  switch (call.api) {
    case 'protect':
      return r.run(({ signal: s }) => op(s), { signal });
    case 'router':
      return r.router.execute((_resource, ctx) => op(ctx.signal), { signal });
    case 'pool':
      return r.pool.run((s) => op(s), { signal });
    case 'withTimeout':
      return withTimeout((s) => op(s), { timeoutMs: TIMEOUT, signal, sleep: clock.sleep });
    case 'withRetry':
      return withRetry((s) => op(s), {
        attempts: 2,
        classify: () => true,
        timeoutMs: 4 * TIMEOUT,
        signal,
        sleep: clock.sleep,
      });
  }
}

describe('every call settles exactly once', () => {
  it('protect / withRetry / withTimeout / router / pool under hostile operations, aborts and bad options', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(callArb, { minLength: 1, maxLength: 14 }), async (calls) => {
        const clock = createManualClock();
        const r = runners(clock);
        const outcomes = calls.map(() => [] as string[]);
        const finished = calls.map(async (call, i) => {
          await clock.sleep(call.startAt);
          const ac = new AbortController();
          const done = new AbortController();
          if (call.abortAt !== undefined) {
            void clock.sleep(call.abortAt, done.signal).then(() => {
              if (!done.signal.aborted) ac.abort(new Error(`abort ${i}`));
            });
          }
          let p: Promise<unknown>;
          try {
            p = start(clock, r, call, ac.signal);
          } catch (error) {
            outcomes[i]?.push(error instanceof TypeError ? 'threw TypeError' : 'threw other');
            done.abort();
            return;
          }
          await p.then(
            () => outcomes[i]?.push('settled'),
            () => outcomes[i]?.push('settled'),
          );
          done.abort();
        });
        await clock.run(Promise.all(finished));
        // Abandoned operations that ignore their signal finish later still; let them.
        await clock.advanceAsync(10 * TIMEOUT);
        await clock.flush();
        expect(outcomes).toEqual(
          calls.map((c) => [c.bad === undefined ? 'settled' : 'threw TypeError']),
        );
        expect(process.faults).toEqual([]);
        expect([r.run.active, r.run.queued, r.router.active, r.router.queued]).toEqual([
          0, 0, 0, 0,
        ]);
        expect([r.pool.active, r.pool.queued]).toEqual([0, 0]);
        expect(clock.pending).toBe(0);
        // The next good call of each kind succeeds.
        await expect(r.run(() => 'next')).resolves.toBe('next');
        await expect(r.router.execute(() => 'next')).resolves.toBe('next');
        await expect(r.pool.run(() => 'next')).resolves.toBe('next');
        await expect(
          withTimeout(() => 'next', { timeoutMs: TIMEOUT, sleep: clock.sleep }),
        ).resolves.toBe('next');
        await expect(withRetry(() => 'next', { sleep: clock.sleep })).resolves.toBe('next');
      }),
      { seed: 42, numRuns: 150 },
    );
  });
});
