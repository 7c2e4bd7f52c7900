import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type AccuracyMeasure,
  findOnPath,
  redisFleetReport,
  redisFleetSettings,
  redisFleetUnavailable,
} from './redis-fleet.js';

describe('redis-fleet: is redis-server there', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bw-bench-path-'));
  const empty = mkdtempSync(join(tmpdir(), 'bw-bench-path-'));
  afterAll(() => {
    rmSync(dir, { recursive: true });
    rmSync(empty, { recursive: true });
  });

  it('finds an executable on PATH, not a plain file and not an empty entry', () => {
    writeFileSync(join(dir, 'redis-server'), '#!/bin/sh\n');
    writeFileSync(join(dir, 'not-executable'), '');
    chmodSync(join(dir, 'redis-server'), 0o755);
    const path = ['', empty, dir].join(delimiter);
    expect(findOnPath('redis-server', path)).toBe(join(dir, 'redis-server'));
    expect(findOnPath('not-executable', path)).toBeUndefined();
    expect(findOnPath('redis-server', undefined)).toBeUndefined();
  });

  it('the suite says why it cannot run without it', () => {
    expect(redisFleetUnavailable(empty)).toMatch(/^redis-server is not on PATH/);
    expect(redisFleetUnavailable(dir)).toBeUndefined();
  });
});

describe('redisFleetSettings', () => {
  it('10 s windows, a 30 s outage and 20 trips; quick: 3 s, 5 s, 5 trips', () => {
    expect(redisFleetSettings(false, {})).toEqual({
      seconds: 10,
      keyedOnly: false,
      outageS: 30,
      trips: 20,
    });
    expect(redisFleetSettings(true, { BENCH_REDIS_KEYED: '1' })).toEqual({
      seconds: 3,
      keyedOnly: true,
      outageS: 5,
      trips: 5,
    });
  });
});

describe('redisFleetReport', () => {
  const accuracy = (label: string, admitted: number, goal = true): AccuracyMeasure => ({
    label,
    goal,
    processes: 4,
    offeredPerProcess: 600,
    limitPerSecond: 200,
    seconds: 10,
    shared: {
      offered: 24_000,
      admitted,
      behindMs: 40,
      redisCalls: 1040,
      timeouts: 0,
      fallbacks: 2,
    },
    localAdmitted: 8000,
  });

  it('accuracy rows: ±5% of the limit is met, beyond it is not; a record row has no target', () => {
    const { tables, targets } = redisFleetReport({
      accuracy: [
        accuracy('a', 1997),
        accuracy('b', 2102),
        accuracy('c', 1900),
        accuracy('d', 500, false),
      ],
    });
    expect(tables[0]?.rows[0]).toEqual([
      'fleet accuracy: a',
      '99.9% of the limit (1997/2000); offered 12.00x the limit (planned 12x), schedule behind by 10 ms at worst (mean over processes); 1040 round trips, 0 over timeoutMs, 2 fallbacks',
      'local limiters: 400%',
    ]);
    expect(tables[0]?.rows).toHaveLength(4);
    expect(targets.map((t) => [t.figure, t.met])).toEqual([
      ['99.9%', true],
      ['105.1%', false],
      ['95.0%', true],
    ]);
    expect(targets[1]?.note).toMatch(/^over;/);
  });

  it('budget, outage and spread targets against the issue’s goals', () => {
    const base = {
      accuracy: [],
      budget: {
        offered: 8000,
        ratio: 0.05,
        minRetriesPerSecond: 50,
        seconds: 10,
        sharedRetries: 901,
        localRetries: 2400,
      },
      outage: {
        outageS: 30,
        processes: 4,
        callsPerSecond: 500,
        coolDownMs: 200,
        spreadMs: 2,
        probes: 147,
        coolDowns: 150,
        recoveredMs: 170,
      },
      tripSpread: { p50Ms: 0.98, maxMs: 3.83, trips: 20 },
    };
    const met = (data: Parameters<typeof redisFleetReport>[0]) =>
      redisFleetReport(data).targets.map((t) => t.met);
    // Allowed: 0.05 × 8000 + 50 × 10 = 900 retries; 901 is over.
    expect(redisFleetReport(base).targets[0]?.figure).toBe('100.1%');
    expect(met(base)).toEqual([false, true, true, true]);
    expect(met({ ...base, budget: { ...base.budget, sharedRetries: 900 } })).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(
      met({
        ...base,
        budget: { ...base.budget, sharedRetries: 900 },
        outage: { ...base.outage, probes: 151, recoveredMs: -1 },
        tripSpread: { ...base.tripSpread, maxMs: 100.5 },
      }),
    ).toEqual([true, false, false, false]);
  });

  it('a --keyed run reports only its accuracy rows', () => {
    const { tables, targets } = redisFleetReport({ accuracy: [accuracy('keyed', 2000)] });
    expect(tables[0]?.rows).toHaveLength(1);
    expect(targets).toHaveLength(1);
  });
});
