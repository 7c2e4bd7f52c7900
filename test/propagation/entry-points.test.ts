// The entry points beside the adapters' resilience stacks — protect, the core
// router, the grpc-js routing channel and tRPC's routingLink — as the client a
// bound mid tier calls its downstream with, on real servers: what the
// downstream server saw of the deadline, the cancellation and the calls after
// the root deadline.
import { afterEach, describe, expect, it } from 'vitest';
import {
  cancelThroughMid,
  ENTRY_KIND,
  type EntryPoint,
  hangUntilCancelled,
  loopPastRootDeadline,
  opener,
  sleep,
} from './hops.js';

const open = opener();
const { hop, client, entryClient, closeAll } = open;
afterEach(closeAll);

const FAST_RETRY = { attempts: 3, backoff: { baseDelayMs: 1, maxDelayMs: 5 } };

const ENTRIES = ['protect', 'createRouter', 'createRoutingChannel', 'routingLink'] as const;

describe.each(ENTRIES)('%s inside a bound handler', (entry: EntryPoint) => {
  const kind = ENTRY_KIND[entry];

  it('the call below ends at the root deadline less the margin (best of 3)', async () => {
    const leaf = await hop(kind, hangUntilCancelled);
    const toLeaf = entryClient(entry, leaf);
    const mid = await hop(kind, (r) => toLeaf.call(r));
    const root = client(mid, { timeoutMs: 300, retry: false });
    const offsets: number[] = [];
    for (let i = 0; i < 3; i++) {
      const rootDeadline = Date.now() + 300;
      await expect(root.call({ message: 'hi' })).rejects.toBeDefined();
      while (leaf.seen[i]?.abortedAt === undefined && Date.now() < rootDeadline + 1_000) {
        await sleep(2);
      }
      offsets.push((leaf.seen[i]?.abortedAt ?? Number.POSITIVE_INFINITY) - (rootDeadline - 5));
    }
    // Its own deadline is 10 s (protect) or none: only the inherited one ends it.
    const best = Math.min(...offsets.map(Math.abs));
    expect(best).toBeLessThanOrEqual(20);
  });

  it('cancelling the root aborts the downstream handler within 20 ms (median of 5)', async () => {
    const lags = await cancelThroughMid(open, kind, (leaf) => entryClient(entry, leaf));
    expect(lags[2]).toBeLessThanOrEqual(20);
    expect(lags[4]).toBeLessThanOrEqual(60);
  });

  it("a leaf failing every call gets ≤ 3 attempts per root request (don't-retry)", async () => {
    const leaf = await hop(kind, async () => {
      throw new Error('leaf down');
    });
    const toLeaf = entryClient(entry, leaf, { retry: FAST_RETRY });
    const mid = await hop(kind, (r) => toLeaf.call(r));
    const root = client(mid, { retry: FAST_RETRY });
    for (let i = 0; i < 3; i++) await expect(root.call({ message: `r${i}` })).rejects.toBeDefined();
    // Without don't-retry the root retries the mid tier: 3 × 3 = 9 per request.
    expect(leaf.seen.length).toBeLessThanOrEqual(9);
    expect(mid.seen).toHaveLength(3);
  });

  it('no call reaches the downstream after the root deadline', async () => {
    // A 20 ms margin covers the in-process transit on a loaded machine (bindings.test.ts).
    const { started, seen } = await loopPastRootDeadline(open, kind, (leaf) =>
      entryClient(entry, leaf, { retry: false, propagate: { marginMs: 20 } }),
    );
    expect(seen.length).toBeGreaterThan(2);
    for (const s of seen) expect(s.arrivedAt).toBeLessThan(started + 200);
  });
});

describe.each(['createRoutingChannel', 'routingLink'] as const)('%s', (entry) => {
  const kind = ENTRY_KIND[entry];

  it.each([undefined, 100])(
    'the downstream server sees the root deadline less the margin (marginMs %s, default 5)',
    async (marginMs) => {
      const leaf = await hop(kind, async (r) => r);
      const toLeaf = entryClient(
        entry,
        leaf,
        marginMs === undefined ? {} : { propagate: { marginMs } },
      );
      const mid = await hop(kind, (r) => toLeaf.call(r));
      const root = client(mid, { timeoutMs: 800 });
      const atMid: number[] = [];
      for (let i = 0; i < 5; i++) await root.call({ message: 'hi' });
      for (const s of mid.seen) atMid.push(s.deadline as number);
      // Transit on a loaded machine only makes a deadline later: the best of five is as sent.
      const errors = leaf.seen.map(
        (s, i) => (s.deadline as number) - ((atMid[i] as number) - (marginMs ?? 5)),
      );
      expect(Math.min(...errors.map(Math.abs))).toBeLessThanOrEqual(5);
    },
  );
});

// The routing channel has always sent `grpc-previous-rpc-attempts`.
describe('routingLink', () => {
  it('outbound attempts carry their attempt number', async () => {
    let calls = 0;
    const leaf = await hop('trpc', async (r) => {
      if (++calls === 1) throw new Error('leaf blip');
      return r;
    });
    const toLeaf = entryClient('routingLink', leaf, {
      retry: { attempts: 2, backoff: { baseDelayMs: 1, maxDelayMs: 2 } },
    });
    const mid = await hop('trpc', (r) => toLeaf.call(r));
    await expect(client(mid).call({ message: 'hi' })).resolves.toEqual({ message: 'hi' });
    expect(leaf.seen.map((s) => s.attempt)).toEqual([1, 2]);
  });
});
