import { expect, it } from 'vitest';
import { main } from './main.js';

it('examples/trpc-client: zero failed queries through outage and proxy errors, traffic returns', async () => {
  const lines: string[] = [];
  const phases = await main((l) => lines.push(l));
  for (const p of Object.values(phases)) expect(p.failed).toBe(0);
  expect(phases.healthy?.servers).toEqual({ primary: 10 });
  expect(phases['primary down']?.servers).toEqual({ secondary: 10 });
  expect(phases['primary HTML 502']?.servers).toEqual({ secondary: 10 });
  expect(phases['primary recovered']?.servers.primary).toBeGreaterThanOrEqual(9);
  expect(lines).toHaveLength(4);
});
