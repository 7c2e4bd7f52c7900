import { describe, expect, it } from 'vitest';
import { chainFigures, type HopRecord, type RootRecord } from './chain-figures.js';

const T0 = 1_000_000;
const shape = {
  scenario: 's',
  stack: 'x',
  breakwater: true,
  startedAt: T0,
  warmFromMs: 2_000,
  marginMs: 5,
};

const root = (id: string, sentAt: number, extra: Partial<RootRecord> = {}): RootRecord => ({
  rootId: id,
  sentAt,
  deadline: sentAt + 1_000,
  stoppedAt: sentAt + 50,
  ok: false,
  gaveUp: false,
  ...extra,
});

const at = (
  hop: HopRecord['hop'],
  rootId: string,
  arrivedAt: number,
  extra: Partial<HopRecord> = {},
): HopRecord => ({
  hop,
  rootId,
  arrivedAt,
  deadline: undefined,
  abortedAt: undefined,
  endedAt: arrivedAt + 1,
  ...extra,
});

describe('chain figures (issue 33)', () => {
  it('attempts at D per root request: first second, warm (from warmFromMs) and all, roots D never saw counted as 0', () => {
    const roots = [
      root('r0', T0),
      root('r1', T0 + 900),
      root('r2', T0 + 2_500),
      root('r3', T0 + 2_600),
    ];
    const records = [
      ...Array.from({ length: 27 }, (_, i) => at('D', 'r0', T0 + i)),
      at('D', 'r1', T0 + 901),
      at('D', 'r2', T0 + 2_501),
      at('C', 'r3', T0 + 2_601),
    ];
    const f = chainFigures(shape, roots, records);
    expect(f.attemptsAtDFirstSecond).toBe(14);
    expect(f.attemptsAtDWarm).toBe(0.5);
    expect(f.attemptsAtDAll).toBe(29 / 4);
    expect(f.rootSuccess).toBe(0);
  });

  it('a late call reached C or D after its caller stopped waiting (never later than its deadline); B and A do not count', () => {
    const roots = [
      root('r0', T0, { stoppedAt: T0 + 2_000, gaveUp: true }),
      root('r1', T0, { stoppedAt: T0 + 100, ok: true }),
    ];
    const records = [
      at('D', 'r0', T0 + 999),
      at('D', 'r0', T0 + 1_001), // after the deadline, although the caller's timer fired later
      at('C', 'r1', T0 + 101), // after r1's answer
      at('B', 'r0', T0 + 1_500),
      at('A', 'r0', T0 + 1_500),
    ];
    expect(chainFigures(shape, roots, records).lateCalls).toBe(2);
  });

  it('cancel propagation: calls below A still running at the give-up, until cancelled or answered; one never stopped makes max Infinity', () => {
    const gaveUp = root('r0', T0, { stoppedAt: T0 + 300, gaveUp: true });
    const records = [
      at('B', 'r0', T0 + 1, { endedAt: undefined, abortedAt: T0 + 302 }),
      at('C', 'r0', T0 + 2, { endedAt: T0 + 310 }),
      at('D', 'r0', T0 + 3, { endedAt: T0 + 100 }), // done before the give-up
      at('A', 'r0', T0, { endedAt: undefined, abortedAt: T0 + 400 }), // A is not below A
    ];
    const f = chainFigures(shape, [gaveUp], records);
    expect([f.cancelCalls, f.cancelP50Ms, f.cancelMaxMs]).toEqual([2, 2, 10]);
    const never = chainFigures(
      shape,
      [gaveUp],
      [...records, at('D', 'r0', T0 + 5, { endedAt: undefined })],
    );
    expect(never.cancelMaxMs).toBe(Infinity);
    // A root that got its answer has nothing to cancel.
    expect(chainFigures(shape, [{ ...gaveUp, gaveUp: false }], records).cancelCalls).toBe(0);
  });

  it('deadline error: seen − (root deadline − margin × hops above), median and worst signed value per hop, missing ones counted', () => {
    const r = root('r0', T0);
    const records = [
      at('A', 'r0', T0, { deadline: r.deadline + 0.5 }),
      at('B', 'r0', T0, { deadline: r.deadline - 5 - 1 }),
      at('B', 'r0', T0, { deadline: r.deadline - 5 + 3 }),
      at('C', 'r0', T0, { deadline: r.deadline - 10 }),
      at('D', 'r0', T0),
    ];
    const e = chainFigures(shape, [r], records).deadlineError;
    expect(e).toEqual({
      A: { medianMs: 0.5, worstMs: 0.5, missing: 0 },
      B: { medianMs: -1, worstMs: 3, missing: 0 },
      C: { medianMs: 0, worstMs: 0, missing: 0 },
      D: { medianMs: undefined, worstMs: undefined, missing: 1 },
    });
  });
});
