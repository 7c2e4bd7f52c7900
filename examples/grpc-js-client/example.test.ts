import { expect, it } from 'vitest';
import { main } from './index.js';

it('examples/grpc-js-client: no failed call through an outage; NOT_SERVING replica gets nothing; traffic returns', async () => {
  const lines: string[] = [];
  const { phases, recovered, tertiaryCalls } = await main((l) => lines.push(l));
  for (const p of Object.values(phases)) expect(p.failed).toBe(0);
  expect(phases.healthy?.answered).toEqual({ primary: 20 });
  expect(phases['primary down']?.answered).toEqual({ secondary: 20 });
  // The first call after the cool-down is the primary's recovery call.
  expect(phases['primary back']?.answered).toEqual({ primary: 1 });
  expect(phases['after recovery']?.answered).toEqual({ primary: 20 });
  expect(recovered).toEqual(['primary']);
  expect(tertiaryCalls).toBe(0);
  expect(lines).toHaveLength(5);
});
