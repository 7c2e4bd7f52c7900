import { describe, expect, it } from 'vitest';
import { otelCostReport, otelCostSettings, OTEL_VARIANTS as V } from './otel-cost.js';

describe('otelCostSettings', () => {
  const exists = (path: string) => path.startsWith('/tmp/base/');

  it('defaults: 15 rounds (5 quick), calibrated batches, SDK variants on, no base', () => {
    expect(otelCostSettings(false, {}, exists)).toEqual({
      rounds: 15,
      calls: undefined,
      withSdk: true,
      baseCore: undefined,
      baseOtel: undefined,
    });
    expect(otelCostSettings(true, {}, exists).rounds).toBe(5);
  });

  it('reads the runner flags from their environment variables', () => {
    expect(
      otelCostSettings(
        true,
        {
          BENCH_OTEL_ROUNDS: '41',
          BENCH_OTEL_CALLS: '10000',
          BENCH_OTEL_OWN_ONLY: '1',
          BENCH_OTEL_BASE_CORE: '/tmp/base/core/index.ts',
          BENCH_OTEL_BASE_OTEL: '/tmp/base/otel/index.ts',
        },
        exists,
      ),
    ).toEqual({
      rounds: 41,
      calls: 10_000,
      withSdk: false,
      baseCore: '/tmp/base/core/index.ts',
      baseOtel: '/tmp/base/otel/index.ts',
    });
  });

  it('refuses a bad count, a missing file and an older otel without an older core', () => {
    expect(() => otelCostSettings(false, { BENCH_OTEL_ROUNDS: '0' }, exists)).toThrow(
      '--otel-rounds must be an integer > 0, got 0',
    );
    expect(() => otelCostSettings(false, { BENCH_OTEL_CALLS: '1.5' }, exists)).toThrow(
      '--otel-calls must be an integer > 0, got 1.5',
    );
    expect(() =>
      otelCostSettings(false, { BENCH_OTEL_BASE_CORE: '/nowhere/index.ts' }, exists),
    ).toThrow('--base-core: no file /nowhere/index.ts');
    expect(() =>
      otelCostSettings(false, { BENCH_OTEL_BASE_OTEL: '/tmp/base/otel/index.ts' }, exists),
    ).toThrow('--base-otel needs --base-core');
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

  it('with a base copy: its own share and the change of the share, paired per round', () => {
    const report = otelCostReport({
      rounds: {
        [V.baseCore]: [500, 520],
        [V.baseNoop]: [900, 940],
        [V.off]: [450, 460],
        [V.noop]: [600, 620],
      },
      bytes: {},
    });
    expect(report.tables[1]?.rows.map((r) => [r[0], r[1]])).toEqual([
      ['the package’s own share: no-op meter, less telemetry off', '155'],
      ['base: no-op meter, less base core', '410'],
      ['telemetry off, less base core', '-55'],
      ['own share, this less base', '-255'],
    ]);
  });
});
