import { describe, expect, it } from 'vitest';
import { skippedResult, type Table, unavailableSuites, withoutRawData } from './report.js';

describe('withoutRawData', () => {
  it('keeps every suite and everything the tables are rendered from, drops only `data`', () => {
    const table = { title: 't', columns: ['a'], rows: [['1']] };
    const suites: Record<
      string,
      { name: string; tables: Table[]; notes: string[]; data?: unknown }
    > = {
      micro: { name: 'micro', tables: [table], notes: ['n'], data: { samples: [1, 2, 3] } },
      kill: { name: 'kill', tables: [], notes: [] },
    };
    expect(withoutRawData(suites)).toEqual({
      micro: { name: 'micro', tables: [table], notes: ['n'] },
      kill: { name: 'kill', tables: [], notes: [] },
    });
    // The input is left as it was.
    expect(suites.micro?.data).toEqual({ samples: [1, 2, 3] });
  });
});

describe('unavailableSuites', () => {
  const suites = [
    { name: 'micro' },
    { name: 'redis-fleet', unavailable: () => 'redis-server is not on PATH' },
    { name: 'otel-cost', unavailable: () => undefined },
  ];

  it('a plain run skips the suites that cannot run, with the reason', () => {
    expect([...unavailableSuites(suites, false)]).toEqual([
      ['redis-fleet', 'redis-server is not on PATH'],
    ]);
    expect(skippedResult('redis-fleet', 'redis-server is not on PATH')).toEqual({
      tables: [],
      targets: [
        {
          target: 'every target of redis-fleet',
          figure: '–',
          met: null,
          note: 'skipped: redis-server is not on PATH',
        },
      ],
      notes: ['**Skipped:** redis-server is not on PATH.'],
      data: null,
      skipped: 'redis-server is not on PATH',
    });
  });

  it('a suite named with --only that cannot run is an error, before anything runs', () => {
    expect(() => unavailableSuites(suites, true)).toThrow(
      'cannot run redis-fleet: redis-server is not on PATH',
    );
    expect(
      unavailableSuites(
        [suites[0], suites[2]].flatMap((s) => (s ? [s] : [])),
        true,
      ).size,
    ).toBe(0);
  });
});
