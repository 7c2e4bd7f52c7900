import { describe, expect, it } from 'vitest';
import type { ChainFigures } from './chain-figures.js';
import { CHAIN_SCENARIOS, chainTargets, deadlineErrorText } from './chain-goals.js';

const none = { medianMs: undefined, worstMs: undefined, missing: 0 };
const figures = (
  scenario: string,
  stack: string,
  breakwater: boolean,
  extra: Partial<ChainFigures> = {},
): ChainFigures => ({
  scenario,
  stack,
  breakwater,
  roots: 30,
  rootSuccess: 1,
  attemptsAtDFirstSecond: 1,
  attemptsAtDWarm: 1,
  attemptsAtDAll: 1,
  lateCalls: 0,
  cancelCalls: 0,
  cancelP50Ms: undefined,
  cancelMaxMs: undefined,
  deadlineError: { A: none, B: none, C: none, D: none },
  ...extra,
});

const targetsOf = (rows: ChainFigures[], scenario: string) =>
  chainTargets(rows).filter((t) => t.target.startsWith(scenario));

describe('chain goal rows (issue 33)', () => {
  it('D fails every call: peers are measured against 27, Breakwater ≤ 3 in the first second and ≤ 1.2 warm', () => {
    const s = CHAIN_SCENARIOS.failAll;
    const rows = (first: number, warm: number) => [
      figures(s, 'grpc-js', false, { attemptsAtDAll: 27 }),
      figures(s, 'tRPC', false, { attemptsAtDAll: 9 }),
      figures(s, 'Breakwater', true, { attemptsAtDFirstSecond: first, attemptsAtDWarm: warm }),
    ];
    expect(targetsOf(rows(3, 1.2), s).map((t) => t.met)).toEqual([true, false, true]);
    expect(targetsOf(rows(3.01, 1), s)[2]).toMatchObject({ figure: '3.01 / 1.00', met: false });
    expect(targetsOf(rows(2, 1.21), s)[2]?.met).toBe(false);
  });

  it('D fails 30%: Breakwater needs success ≥ and attempts at D ≤ every peer', () => {
    const s = CHAIN_SCENARIOS.fail30;
    const rows = (success: number, attempts: number) => [
      figures(s, 'grpc-js', false, { rootSuccess: 0.99, attemptsAtDAll: 1.6 }),
      figures(s, 'tRPC', false, { rootSuccess: 0.97, attemptsAtDAll: 1.5 }),
      figures(s, 'Breakwater', true, { rootSuccess: success, attemptsAtDAll: attempts }),
    ];
    expect(targetsOf(rows(0.99, 1.5), s).map((t) => t.met)).toEqual([true, true]);
    expect(targetsOf(rows(0.98, 1.4), s).map((t) => t.met)).toEqual([false, true]);
    expect(targetsOf(rows(1, 1.55), s).map((t) => t.met)).toEqual([true, false]);
  });

  it('D hangs: one late call, or one call below A stopping more than 20 ms after the give-up, misses the goal', () => {
    for (const s of [CHAIN_SCENARIOS.hangDeadline, CHAIN_SCENARIOS.hangCancel]) {
      const bw = (extra: Partial<ChainFigures>) =>
        targetsOf(
          [figures(s, 'peer', false, { lateCalls: 40 }), figures(s, 'Breakwater', true, extra)],
          s,
        ).filter((t) => t.target.includes('no call to C or D'));
      expect(bw({ cancelCalls: 90, cancelMaxMs: 20 }).map((t) => t.met)).toEqual([true]);
      expect(bw({ cancelCalls: 90, cancelMaxMs: 20.5 })[0]?.met).toBe(false);
      expect(bw({ cancelCalls: 90, cancelMaxMs: Infinity })[0]?.figure).toBe(
        '0 late; max never over 90 calls',
      );
      expect(bw({ lateCalls: 1, cancelCalls: 90, cancelMaxMs: 3 })[0]?.met).toBe(false);
    }
  });

  it('deadline per hop within ±5 ms of the root’s minus the margins; a hop without a deadline misses it', () => {
    const s = CHAIN_SCENARIOS.hangDeadline;
    const hop = (worstMs: number | undefined, missing = 0) => ({
      medianMs: worstMs === undefined ? undefined : 0.5,
      worstMs,
      missing,
    });
    const row = (B: number, D: ReturnType<typeof hop>) =>
      figures(s, 'Breakwater', true, { deadlineError: { A: none, B: hop(B), C: hop(-5), D } });
    const deadlineRow = (f: ChainFigures) =>
      chainTargets([f]).find((t) => t.target.includes('deadline at each hop'));
    expect(deadlineRow(row(4.9, hop(1)))).toMatchObject({
      figure: 'B +0.5 / +4.9 · C +0.5 / −5.0 · D +0.5 / +1.0',
      met: true,
    });
    expect(deadlineRow(row(5.1, hop(1)))?.met).toBe(false);
    expect(deadlineRow(row(1, hop(undefined, 3)))?.met).toBe(false);
    expect(deadlineRow(row(1, hop(1, 2)))?.met).toBe(false);
    expect(deadlineErrorText(row(1, hop(undefined, 3)))).toBe(
      'B +0.5 / +1.0 · C +0.5 / −5.0 · D none',
    );
    expect(deadlineErrorText(row(1, hop(1, 2)))).toBe(
      'B +0.5 / +1.0 · C +0.5 / −5.0 · D +0.5 / +1.0 (2 none)',
    );
  });
});
