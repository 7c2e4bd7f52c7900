import { describe, expect, it } from 'vitest';
import { type Table, withoutRawData } from './report.js';

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
