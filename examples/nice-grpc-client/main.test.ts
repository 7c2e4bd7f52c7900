import { expect, it } from 'vitest';
import { main } from './main.js';

it('examples/nice-grpc-client: retries hide flakes, deadlines reach the server, the circuit sheds an outage', async () => {
  const lines: string[] = [];
  const reports = await main((line) => lines.push(line));
  const { slow, flaky, down } = reports;
  // Slow: every call ends on the 300 ms deadline, which the server saw (2 calls: under the circuit's threshold).
  expect(slow?.failed).toEqual({ DEADLINE_EXCEEDED: 2 });
  expect(slow?.maxDeadlineSeenMs).toBeLessThanOrEqual(300);
  expect(slow?.maxDeadlineSeenMs).toBeGreaterThan(0);
  // Flaky (20% UNAVAILABLE, seeded): retries make every call succeed, at some extra attempts.
  expect(flaky?.ok).toBe(30);
  expect(flaky?.serverAttempts).toBeGreaterThan(30);
  // Down: each of the first 3 calls makes up to 4 attempts, then the circuit refuses without sending.
  expect(down?.failed).toEqual({ UNAVAILABLE: 3, 'circuit open': 7 });
  expect(down?.serverAttempts).toBeLessThanOrEqual(12);
  expect(lines).toHaveLength(3);
});
