import { STANDARD_RESILIENCE } from '@breakwater/core';
import { describe, expect, it } from 'vitest';
import { DRIVERS } from '../conformance/drivers.js';
import type { ConformanceOptions, EntryPoint, Harness } from '../conformance/types.js';
import { drive as driveEvery, type Upstream, upstreamFor } from './upstream.js';

// Issue 19, the router's outage gate against real servers: three servers behind one
// routing entry point (the core router, the grpc-js routing channel, tRPC routingLink),
// the standard circuit per server, 25 calls a second (the demo's rate). While all three
// answer every attempt UNAVAILABLE / 503, the router sends one probe per 200 ms across
// the three (not one per server, no failover after a failed probe): at most 0.2 attempts
// per call. When they answer again, the next probe succeeds and traffic flows at once.

/** A call every TICK_MS (open loop): 25 calls a second. */
const TICK_MS = 40;
const TRIP_MS = 3_000;
const OUTAGE_MS = 4_000;
const RECOVERY_MS = 1_200;

const RECOMMENDED = STANDARD_RESILIENCE as unknown as ConformanceOptions;
const ROUTING: [EntryPoint, ConformanceOptions][] = [
  ['router', RECOMMENDED],
  ['grpc-js routing channel', {}],
  ['tRPC routingLink', RECOMMENDED],
];

const drive = (harness: Harness, ms: number, phase: string) =>
  driveEvery(harness, ms, phase, TICK_MS);

describe('the outage gate (real servers, 3 of them, 25 calls/s, the recommended settings)', () => {
  for (const [entry, options] of ROUTING) {
    it(`${entry}: at most 0.2 attempts per call while all three fail, first success within 250 ms of recovery`, async () => {
      const ups: Upstream[] = await Promise.all([0, 1, 2].map(() => upstreamFor(entry)));
      const [a, b, c] = ups as [Upstream, Upstream, Upstream];
      const harness = DRIVERS[entry].open(
        { primary: a.address, secondary: b.address, tertiary: c.address },
        options,
      );
      const attempts = () => ups.reduce((n, u) => n + u.attempts(), 0);
      try {
        const warm = await drive(harness, 200, 'warm');
        expect(warm.outcomes.every((o) => o.ok)).toBe(true);
        for (const u of ups) u.fail(true);
        await drive(harness, TRIP_MS, 'trip');
        const before = attempts();
        const outage = await drive(harness, OUTAGE_MS, 'outage');
        const perCall = (attempts() - before) / outage.outcomes.length;
        expect(outage.outcomes.some((o) => o.ok)).toBe(false);
        // One probe per 200 ms across the three servers, at the first call after it is due.
        expect(perCall, `${perCall} attempts per call in the outage`).toBeLessThanOrEqual(0.2);

        const atRecovery = attempts();
        for (const u of ups) u.fail(false);
        const recoveredAt = performance.now();
        const recovery = await drive(harness, RECOVERY_MS, 'recovery');
        const firstOk = Math.min(
          ...recovery.outcomes.filter((o) => o.ok).map((o) => o.settledAt - recoveredAt),
        );
        // 250 ms on an idle machine; plus how late this loaded machine started the ticks.
        expect(firstOk, `first success ${firstOk} ms after recovery`).toBeLessThanOrEqual(
          250 + recovery.lagMs,
        );
        const late = recovery.outcomes.filter((o) => o.startedAt - recoveredAt >= 500);
        expect(late.filter((o) => o.ok).length / late.length).toBeGreaterThanOrEqual(0.99);
        expect(attempts() - atRecovery).toBeLessThanOrEqual(1.5 * recovery.outcomes.length);
      } finally {
        await harness.close();
        await Promise.all(ups.map((u) => u.close()));
      }
    }, 15_000);
  }
});
