import { describe, expect, it } from 'vitest';
import { createRetryBudget } from '../retry/budget.js';
import { COUNT_ONLY_CIRCUIT } from '../test-helpers/circuit.js';
import type { ManualClock } from '../time/manual-clock.js';
import { call, type FakeResource, failing, setup } from './test-helpers/fake-providers.js';
import type { Router } from './types.js';

// Issue 30: with attemptTimeoutMs left out, an attempt that runs past its provider's derived
// cut is not cancelled: a backup starts on another provider, the first answer wins. The demo
// lost calls when the cut failed a slow attempt over to a dead provider its slow one beat.

const circuit = { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 200 };

/** `r` answers `ok:<id>` after `ms` of virtual time. */
function answersIn(r: FakeResource, clock: ManualClock, ms: number): void {
  r.behave = async (_n, signal) => {
    await clock.sleep(ms, signal);
    if (signal.aborted) throw signal.reason;
    return `ok:${r.id}`;
  };
}

/** Runs one request with a deadline `inMs` from now; settles with its value or error. */
function runBy(router: Router<FakeResource>, clock: ManualClock, inMs: number): Promise<unknown> {
  const deadlineAt = clock() + inMs;
  return clock
    .run(router.execute((r, ctx) => call(r, ctx), { deadlineAt }))
    .catch((e: unknown) => e);
}

/** b first (priority), answering in 10 ms 20 times: its derived cut is 100 ms. */
async function warmed(options: Parameters<typeof setup>[1] = {}) {
  const s = setup(['b', 'a'], { selection: 'priority', protection: { circuit }, ...options });
  answersIn(s.res.b!, s.clock, 10);
  for (let i = 0; i < 20; i++) await runBy(s.router, s.clock, 1_000);
  return s;
}

describe('router: a slow attempt past its derived cut is backed up, not cancelled', () => {
  it('the demo case: b slow once, a dead with its circuit half-open: b answers the call', async () => {
    const { router, res, clock } = await warmed();
    failing(res.a!);
    router.circuit('a')?.trip();
    clock.advance(200);
    expect(router.circuit('a')?.state).toBe('half-open');
    answersIn(res.b!, clock, 300);
    const t0 = clock();
    expect(await runBy(router, clock, 1_000)).toBe('ok:b');
    expect(clock() - t0).toBe(300);
    // The backup went to a at the cut (its probe, which failed); b's attempt ran on, never aborted.
    expect(res.a!.calls).toBe(1);
    expect(res.b!.calls).toBe(21);
    expect(res.b!.signals.at(-1)?.aborted).toBe(false);
  });

  it('the backup answers first: it wins, the slow attempt is cancelled and counts against its circuit', async () => {
    const { router, res, clock } = await warmed();
    answersIn(res.a!, clock, 10);
    answersIn(res.b!, clock, 300);
    const t0 = clock();
    expect(await runBy(router, clock, 1_000)).toBe('ok:a');
    // The backup started at b's cut (100 ms) and answered 10 ms later.
    expect(clock() - t0).toBe(110);
    expect(res.b!.signals.at(-1)?.aborted).toBe(true);
    // b's visit ends as the loser that ran past its cut, a moment after the answer.
    await clock.flush();
    expect(router.circuit('b')?.state).toBe('open');
  });

  it('a backup the budget refuses is not started: the slow attempt keeps running and answers', async () => {
    const budget = createRetryBudget({ ratio: 0, minRetriesPerSecond: 0 });
    const { router, res, clock } = await warmed({ budget });
    answersIn(res.a!, clock, 10);
    answersIn(res.b!, clock, 300);
    expect(await runBy(router, clock, 1_000)).toBe('ok:b');
    expect(res.a!.calls).toBe(0);
  });

  it('a call not safe to repeat is never backed up', async () => {
    const { router, res, clock } = await warmed();
    answersIn(res.a!, clock, 10);
    answersIn(res.b!, clock, 300);
    const deadlineAt = clock() + 1_000;
    const value = clock.run(
      router.execute((r, ctx) => call(r, ctx), { deadlineAt, idempotent: false }),
    );
    expect(await value).toBe('ok:b');
    expect(res.a!.calls).toBe(0);
  });

  it('an explicit attemptTimeoutMs still cuts: the slow attempt is cancelled and the call fails over', async () => {
    const { router, res, clock } = await warmed({
      protection: { circuit, attemptTimeoutMs: 50 },
    });
    answersIn(res.a!, clock, 10);
    answersIn(res.b!, clock, 300);
    const t0 = clock();
    expect(await runBy(router, clock, 1_000)).toBe('ok:a');
    expect(clock() - t0).toBe(60);
    expect(res.b!.signals.at(-1)?.aborted).toBe(true);
  });
});
