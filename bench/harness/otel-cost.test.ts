import { describe, expect, it } from 'vitest';
import { otelCostReport, otelCostSettings, OTEL_VARIANTS as V } from './otel-cost.js';

describe('otelCostSettings', () => {
  it('defaults: 15 rounds (5 quick), calibrated batches, SDK variants on', () => {
    expect(otelCostSettings(false, {})).toEqual({ rounds: 15, calls: undefined, withSdk: true });
    expect(otelCostSettings(true, {}).rounds).toBe(5);
  });

  it('reads the runner flags from their environment variables', () => {
    expect(
      otelCostSettings(true, {
        BENCH_OTEL_ROUNDS: '41',
        BENCH_OTEL_CALLS: '10000',
        BENCH_OTEL_OWN_ONLY: '1',
      }),
    ).toEqual({ rounds: 41, calls: 10_000, withSdk: false });
  });

  it('refuses a bad count, naming the flag', () => {
    expect(() => otelCostSettings(false, { BENCH_OTEL_ROUNDS: '0' })).toThrow(
      '--otel-rounds must be an integer > 0, got 0',
    );
    expect(() => otelCostSettings(false, { BENCH_OTEL_CALLS: '1.5' })).toThrow(
      '--otel-calls must be an integer > 0, got 1.5',
    );
  });
});

describe('otelCostReport', () => {
  it('differences are paired per round, targets from the no-op variant', () => {
    const report = otelCostReport({
      rounds: {
        [V.off]: [400, 900, 410],
        [V.sdk]: [4000, 4600, 3900],
        // Round 2 was slow for both: paired differences 100, 100, 120 (median 100); the
        // difference of medians would be 900 - 410 = 490.
        [V.noop]: [500, 1000, 530],
      },
      bytes: { [V.off]: 650, [V.sdk]: 2500, [V.noop]: 700 },
    });
    const [variants, added] = report.tables;
    expect(variants?.rows).toEqual([
      [V.off, '410', '400–900', '650'],
      [V.sdk, '4000', '3900–4600', '2500'],
      [V.noop, '530', '500–1000', '700'],
    ]);
    expect(added?.rows).toEqual([
      ['otel with the SDK, less telemetry off', '3600', '3490–3700', '1850'],
      ['the package’s own share: no-op meter, less telemetry off', '100', '100–120', '50'],
    ]);
    expect(Object.values(V)).toEqual([V.off, V.sdk, V.noop]);
    expect(report.targets.map((t) => [t.figure, t.met])).toEqual([
      ['100 ns (rounds 100–120)', true],
      ['+50 B per call', false],
    ]);
  });

  it('misses the ns target above 150 ns, and counts bytes under one boxed number as none', () => {
    const report = otelCostReport({
      rounds: { [V.off]: [400, 400], [V.noop]: [560, 600] },
      bytes: { [V.off]: 650, [V.noop]: 658 },
    });
    expect(report.targets[0]).toMatchObject({
      met: false,
      note: expect.stringMatching(/^over by 30 ns/),
    });
    expect(report.targets[1]).toMatchObject({ figure: '+8 B per call', met: true });
    // Without --expose-gc there are no byte figures: not measured, not "met".
    const noGc = otelCostReport({
      rounds: { [V.off]: [400], [V.noop]: [500] },
      bytes: { [V.off]: undefined, [V.noop]: undefined },
    });
    expect(noGc.targets[1]).toMatchObject({ figure: 'not measured', met: null });
  });
});
