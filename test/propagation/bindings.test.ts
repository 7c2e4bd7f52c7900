// Each server binding on a real server, called by its own framework's
// Breakwater client: what the downstream server saw of the deadline, the
// cancellation and the calls after the root deadline.
import { afterEach, describe, expect, it } from 'vitest';
import { cancelThroughMid, loopPastRootDeadline, opener } from './hops.js';

const open = opener();
const { hop, client, closeAll } = open;
afterEach(closeAll);

describe.each(['grpc-js', 'nice-grpc', 'trpc'] as const)('%s server binding', (kind) => {
  // Hops share one process on a loaded 2-core machine: a relative timeout (grpc-timeout works so
  // too) gains the event loop's delay in transit, which only ever makes a deadline later. The best
  // of five calls is the deadline as sent.
  it.each([undefined, 100])(
    'the downstream server sees the root deadline less the margin (marginMs %s, default 5)',
    async (marginMs) => {
      const leaf = await hop(kind, async (r) => r);
      const toLeaf = client(leaf, marginMs === undefined ? {} : { propagate: { marginMs } });
      const mid = await hop(kind, (r) => toLeaf.call(r));
      const root = client(mid, { timeoutMs: 800 });
      const atRoot: number[] = [];
      for (let i = 0; i < 5; i++) {
        atRoot.push(Date.now() + 800);
        await root.call({ message: 'hi' });
      }
      const best = (errors: number[]) => Math.min(...errors.map(Math.abs));
      const atMid = mid.seen.map((s) => s.deadline as number);
      const atLeaf = leaf.seen.map((s) => s.deadline as number);
      // The mid tier sees the root's 800 ms; the leaf that less the margin, not its own 10 s.
      expect(best(atMid.map((d, i) => d - (atRoot[i] as number)))).toBeLessThanOrEqual(5);
      expect(
        best(atLeaf.map((d, i) => d - ((atMid[i] as number) - (marginMs ?? 5)))),
      ).toBeLessThanOrEqual(5);
    },
  );

  it('cancelling the root aborts the downstream handler within 20 ms (median of 5)', async () => {
    const lags = await cancelThroughMid(open, kind, (leaf) => client(leaf));
    expect(lags[2]).toBeLessThanOrEqual(20);
    expect(lags[4]).toBeLessThanOrEqual(60);
  });

  it('no call reaches the downstream after the root deadline', async () => {
    // A 20 ms margin covers the in-process transit on a loaded machine (see above).
    const { started, seen } = await loopPastRootDeadline(open, kind, (leaf) =>
      client(leaf, { retry: false, propagate: { marginMs: 20 } }),
    );
    expect(seen.length).toBeGreaterThan(2);
    for (const s of seen) expect(s.arrivedAt).toBeLessThan(started + 200);
  });
});
