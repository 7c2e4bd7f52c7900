import { describe, expect, it } from 'vitest';
import { bestPeer, type LaneFigures, partialTargets } from './partial-goals.js';

const lane = (
  name: string,
  successRate: number,
  attemptsPerCall: number,
  p99: number,
  peer = true,
  protocol = 'grpc',
): LaneFigures => ({
  lane: name,
  protocol,
  peer,
  successRate,
  attemptsPerCall,
  p50: 5,
  p99,
  p999: p99,
  failedUnsent: 3,
  failed: 4,
  offered: 500,
  returnMs: undefined,
});

const peers = [
  lane('grpc-js round_robin', 0.96, 1, 40),
  lane('grpc-js round_robin + hedgingPolicy', 0.99, 1.4, 60),
  lane('tRPC retryLink', 1, 1.1, 20, true, 'trpc'),
];

describe('partial goal rows (issue 30)', () => {
  it('the best peer is the most successful of its protocol, not another protocol’s', () => {
    expect(bestPeer(peers, 'grpc')?.lane).toBe('grpc-js round_robin + hedgingPolicy');
    expect(bestPeer(peers, 'trpc')?.lane).toBe('tRPC retryLink');
  });

  it('success within 0.5 point of the best peer is met; beyond it, not, with what failed unseen', () => {
    const met = partialTargets('killed', [...peers, lane('Breakwater a', 0.986, 1.45, 40, false)]);
    expect(met.map((t) => t.met)).toEqual([true, true, true]);
    const missed = partialTargets('killed', [
      ...peers,
      lane('Breakwater a', 0.984, 1.45, 40, false),
    ]);
    expect(missed[0]).toMatchObject({
      target: 'killed: Breakwater a success ≥ best peer − 0.5 pt',
      figure: '98.4% vs grpc-js round_robin + hedgingPolicy 99.0%',
      met: false,
      note: '4 failed, 3 of them never reached a server',
    });
  });

  it('attempts per call at most the best peer’s + 0.1; p99 at most the fastest peer’s', () => {
    const rows = (attempts: number, p99: number) =>
      partialTargets('tail', [...peers, lane('Breakwater a', 0.99, attempts, p99, false)]);
    expect(rows(1.5, 40).map((t) => t.met)).toEqual([true, true, true]);
    expect(rows(1.51, 41).map((t) => t.met)).toEqual([true, false, false]);
  });
});
