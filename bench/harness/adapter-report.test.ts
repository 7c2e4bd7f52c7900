import { describe, expect, it } from 'vitest';
import { DEADLINE_BASELINES, VARIANTS } from '../suites/adapter-lanes.js';
import { adapterTables, type DeadlineBaseline, type Measured } from './adapter-report.js';
import type { VariantRounds } from './closed-loop.js';

/** Rounds with the same figures every round: `throughput` calls/s, `bytes` per call. */
function rounds(throughput: number, bytes: number): VariantRounds {
  return {
    throughput: [throughput, throughput],
    p99: [1, 1],
    clientCpuUs: [10, 10],
    clientBytes: [bytes, bytes],
    serverCpuUs: [5, 5],
  };
}

const baselines: Record<string, readonly DeadlineBaseline[]> = {
  'grpc-js': [{ variant: 'bareDeadline', label: 'deadline option (sent and enforced)' }],
  'nice-grpc': [
    { variant: 'bareDeadline', label: 'deadline header (sent, not enforced)' },
    { variant: 'bareDeadlineEnforced', label: 'header + deadline middleware (sent and enforced)' },
  ],
  'tRPC (httpBatchLink)': [
    { variant: 'bareDeadlineEnforced', label: 'AbortSignal.timeout per call (enforced)' },
  ],
};

describe('adapterTables', () => {
  it('compares the stack with every deadline baseline that ran, one row each, saying which lane is which', () => {
    const nice: Measured = {
      adapter: 'nice-grpc',
      concurrency: 64,
      rounds: {
        bare: rounds(1000, 40_000),
        stack: rounds(900, 48_000),
        bareDeadline: rounds(960, 43_000),
        bareDeadlineEnforced: rounds(925, 45_000),
        stackNoDeadline: rounds(950, 46_000),
        bareAgain: rounds(1000, 40_000),
      },
    };
    const grpc: Measured = {
      adapter: 'grpc-js',
      concurrency: 1,
      rounds: {
        bare: rounds(1000, 37_000),
        stack: rounds(980, 38_000),
        bareDeadline: rounds(1000, 37_500),
      },
    };
    const trpc: Measured = {
      adapter: 'tRPC (httpBatchLink)',
      concurrency: 1,
      rounds: { bare: rounds(1000, 80_000), stack: rounds(990, 81_000) },
    };
    const [, deadline] = adapterTables([grpc, nice, trpc], {
      deadlineMs: 10_000,
      baselines,
      skipped: [],
    });
    expect(deadline?.title).toContain('same 10 s deadline');
    expect(deadline?.columns[2]).toBe('Baseline: bare client +');
    expect(deadline?.rows).toEqual([
      [
        'grpc-js',
        '1',
        'deadline option (sent and enforced)',
        '1000 (1000–1000)',
        '100.0% [100.0%–100.0%]',
        '98.0% [98.0%–98.0%]',
        '–',
        '37500 → 38000',
      ],
      [
        'nice-grpc',
        '64',
        'deadline header (sent, not enforced)',
        '960 (960–960)',
        '96.0% [96.0%–96.0%]',
        '93.8% [93.8%–93.8%]',
        '95.0% [95.0%–95.0%]',
        '43000 → 48000',
      ],
      [
        'nice-grpc',
        '64',
        'header + deadline middleware (sent and enforced)',
        '925 (925–925)',
        '92.5% [92.5%–92.5%]',
        '97.3% [97.3%–97.3%]',
        '95.0% [95.0%–95.0%]',
        '45000 → 48000',
      ],
    ]);
  });

  it('leaves out a baseline lane that did not run', () => {
    const nice: Measured = {
      adapter: 'nice-grpc',
      concurrency: 1,
      rounds: { bare: rounds(1000, 1), stack: rounds(900, 2), bareDeadline: rounds(950, 1) },
    };
    const [headline, deadline] = adapterTables([nice], {
      deadlineMs: 10_000,
      baselines,
      skipped: ['grpc-js: no server'],
    });
    expect(deadline?.rows.map((r) => r[2])).toEqual(['deadline header (sent, not enforced)']);
    expect(headline?.rows[0]?.[4]).toBe('90.0% [90.0%–90.0%]');
    expect(headline?.notes).toEqual(['not measured: grpc-js: no server']);
  });
});

describe('the default run', () => {
  it('measures every deadline baseline; nice-grpc has one that only sends and one that sends and enforces, tRPC one that enforces', () => {
    for (const [adapter, list] of Object.entries(DEADLINE_BASELINES)) {
      for (const b of list) {
        expect(VARIANTS[adapter as keyof typeof VARIANTS]).toContain(b.variant);
      }
    }
    expect(DEADLINE_BASELINES['nice-grpc'].map((b) => b.variant)).toEqual([
      'bareDeadline',
      'bareDeadlineEnforced',
    ]);
    expect(DEADLINE_BASELINES['nice-grpc'][1]?.label).toMatch(/middleware-deadline.*enforced/);
    // tRPC sends no deadline: its baseline enforces the same timeout the tRPC way.
    expect(DEADLINE_BASELINES.trpc.map((b) => b.variant)).toEqual(['bareDeadlineEnforced']);
    expect(DEADLINE_BASELINES.trpc[0]?.label).toMatch(/AbortSignal\.timeout.*enforced/);
  });
});
