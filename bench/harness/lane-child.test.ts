import { startGrpcChaosServer } from '@breakwater/chaos';
import { describe, expect, it } from 'vitest';
import type { LaneSpec } from '../suites/adapter-lanes.js';
import { spawnCommandChild } from './children.js';
import type { RoundFigures } from './closed-loop.js';
import type { Attribution } from './profile.js';

describe('lane child', () => {
  it('runs one closed-loop round of its lane in its own process, against a real server', async () => {
    await using server = await startGrpcChaosServer({ replica: 'lane-test' });
    const spec: LaneSpec = { adapter: 'nice-grpc', variant: 'stack', address: server.address };
    const lane = await spawnCommandChild<{ ready: boolean }>('lane-child.ts', [
      JSON.stringify(spec),
    ]);
    try {
      expect(lane.ready).toEqual({ ready: true });
      const r = (await lane.command('run', { concurrency: 4, ms: 300 })) as RoundFigures;
      expect(r.errors).toBe(0);
      expect(r.calls).toBeGreaterThan(0);
      expect(r.throughput).toBeGreaterThan(0);
      expect(r.p99).toBeGreaterThan(0);
      // Its own CPU per call: more than nothing, less than the whole round spread over the calls.
      expect(r.clientCpuUs).toBeGreaterThan(0);
      expect(r.clientCpuUs).toBeLessThan((300_000 * 2) / r.calls);
      // What the server saw: each completed call once (no retries), each with the stack's 10 s deadline.
      expect(server.total('Unary')).toBe(r.calls);
      const remaining = server.observed.map((o) => o.deadlineRemainingMs ?? 0);
      expect(Math.min(...remaining)).toBeGreaterThan(9_000);
      expect(Math.max(...remaining)).toBeLessThanOrEqual(10_000);

      // A profiled round also says where the lane's CPU went, over the same calls.
      const p = (await lane.command('run', {
        concurrency: 4,
        ms: 300,
        profile: true,
      })) as RoundFigures & {
        attribution: Attribution;
      };
      expect(p.errors).toBe(0);
      expect(p.attribution.calls).toBe(p.calls);
      expect(p.attribution.usPerCall.breakwater).toBeGreaterThan(0);
      expect(p.attribution.usPerCall['nice-grpc']).toBeGreaterThan(0);
      expect(p.attribution.breakwater.length).toBeGreaterThan(0);
      expect(server.total('Unary')).toBe(r.calls + p.calls);
    } finally {
      await lane.close();
    }
  });

  it('rejects a command when its lane cannot be built', async () => {
    const spec = { adapter: 'trpc', variant: 'bareDeadline', address: 'http://127.0.0.1:1' };
    await expect(spawnCommandChild('lane-child.ts', [JSON.stringify(spec)])).rejects.toThrow(
      /lane-child\.ts exited with 1/,
    );
  });
});
