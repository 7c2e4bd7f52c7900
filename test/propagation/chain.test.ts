// Call chains across the three frameworks in one process, each hop a real
// server with its binding: the deadline and cancellation travel the whole
// chain, a failing leaf gets at most one layer's retries, and a handler
// outside any binding (or a call with `propagate: false`) is left as it was.
import { currentInbound } from '@breakwater/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cancellationLags,
  type clientOf,
  type Handler,
  type Hop,
  hangUntilCancelled,
  type Kind,
  opener,
} from './hops.js';

const { hop, client, closeAll } = opener();
afterEach(closeAll);

/** Hops `kinds[0]` → … → `kinds[n-1]`, the last running `leaf`; returns them first to last. */
async function chain(
  kinds: readonly Kind[],
  leaf: Handler,
  clientOptions?: Parameters<typeof clientOf>[1],
): Promise<Hop[]> {
  const hops: Hop[] = [];
  let handler = leaf;
  for (let i = kinds.length - 1; i >= 0; i--) {
    const h = await hop(kinds[i] as Kind, handler);
    hops.unshift(h);
    const next = client(h, clientOptions);
    handler = (r) => next.call(r);
  }
  return hops;
}

/**
 * 32-bit FNV-1a of `text`, finished with murmur3's mix so that texts a
 * character apart hash apart: a fixed pattern of failures that looks random
 * (of r0…r59, r24 fails its first three calls at the leaf).
 */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) >>> 0;
}

const FAST_RETRY = { retry: { attempts: 3, backoff: { baseDelayMs: 1, maxDelayMs: 5 } } };

describe('a mixed chain grpc-js → nice-grpc → tRPC → grpc-js', () => {
  const KINDS = ['grpc-js', 'nice-grpc', 'trpc', 'grpc-js'] as const;

  it('every hop sees the root deadline less 5 ms per hop above it', async () => {
    const hops = await chain(KINDS, async (r) => r);
    const root = client(hops[0] as Hop, { timeoutMs: 1_000 });
    const atRoot: number[] = [];
    for (let i = 0; i < 5; i++) {
      atRoot.push(Date.now() + 1_000);
      await root.call({ message: 'hi' });
    }
    // Transit on a loaded machine only makes a deadline later: the best of five is as sent.
    const best = (errors: number[]) => Math.min(...errors.map(Math.abs));
    const seen = hops.map((h) => h.seen.map((s) => s.deadline as number));
    expect(
      best((seen[0] as number[]).map((d, i) => d - (atRoot[i] as number))),
    ).toBeLessThanOrEqual(5);
    for (let hop = 1; hop < seen.length; hop++) {
      const above = seen[hop - 1] as number[];
      const errors = (seen[hop] as number[]).map((d, i) => d - ((above[i] as number) - 5));
      expect(best(errors)).toBeLessThanOrEqual(5);
    }
  });

  it('cancelling the root aborts the handler at the far end (median of 3)', async () => {
    const hops = await chain(KINDS, hangUntilCancelled);
    const lags = await cancellationLags(client(hops[0] as Hop), hops[3] as Hop, 3);
    // Three hops of cancellation, each through a real server: 20 ms a hop.
    expect(lags[1]).toBeLessThanOrEqual(60);
  });
});

describe("retry only at the layer above the one that failed (don't-retry answers)", () => {
  const fail: Handler = async () => {
    throw new Error('leaf down');
  };

  it.each([
    ['grpc-js', 'grpc-js', 'grpc-js'],
    ['nice-grpc', 'nice-grpc', 'nice-grpc'],
    ['trpc', 'trpc', 'trpc'],
    ['grpc-js', 'trpc', 'nice-grpc'],
  ] as const)(
    '%s → %s → %s: a leaf failing every call gets ≤ 3 attempts per root request',
    async (...kinds) => {
      const hops = await chain(kinds, fail, FAST_RETRY);
      const root = client(hops[0] as Hop, FAST_RETRY);
      const requests = 4;
      for (let i = 0; i < requests; i++) {
        await expect(root.call({ message: `r${i}` })).rejects.toBeDefined();
      }
      const leaf = hops[2] as Hop;
      // Without don't-retry each layer retries the one below: 3 × 3 × 3 = 27 per request.
      expect(leaf.seen.length).toBeLessThanOrEqual(3 * requests);
      // Only the layer right above the leaf retried it; the root tried its own hop once per request.
      expect((hops[0] as Hop).seen.length).toBe(requests);
    },
  );

  it.each([
    ['grpc-js', 'grpc-js', 'grpc-js'],
    ['grpc-js', 'trpc', 'nice-grpc'],
  ] as const)(
    '%s → %s → %s: a leaf failing 30% of calls at random loses no more than a chain that retries at every layer',
    async (...kinds) => {
      // Every call at the leaf fails or not by a hash of the request and how often the leaf saw it.
      const failing = (): Handler => {
        const seen = new Map<string, number>();
        return async (r) => {
          const n = (seen.get(r.message) ?? 0) + 1;
          seen.set(r.message, n);
          if (fnv1a(`${r.message}#${n}`) % 100 < 30) throw new Error('leaf blip');
          return r;
        };
      };
      const requests = 60;
      const answered = async (hops: Hop[], options: typeof FAST_RETRY & { propagate?: false }) => {
        const root = client(hops[0] as Hop, options);
        let ok = 0;
        for (let i = 0; i < requests; i++) {
          if (
            await root.call({ message: `r${i}` }).then(
              () => true,
              () => false,
            )
          )
            ok++;
        }
        return ok;
      };
      const breakwater = await chain(kinds, failing(), FAST_RETRY);
      const peer = await chain(kinds, failing(), { ...FAST_RETRY, propagate: false });
      const ours = await answered(breakwater, FAST_RETRY);
      const theirs = await answered(peer, { ...FAST_RETRY, propagate: false });
      expect(ours).toBeGreaterThanOrEqual(theirs);
      // The peer retries at every layer; here both send 81 calls to the leaf for 60 root requests.
      const atLeaf = (hops: Hop[]) => (hops[2] as Hop).seen.length;
      expect(atLeaf(breakwater)).toBeLessThanOrEqual(atLeaf(peer));
      expect(atLeaf(breakwater)).toBeLessThanOrEqual(2 * requests);
    },
  );

  it.each(['grpc-js', 'nice-grpc', 'trpc'] as const)(
    '%s: a mid tier serving a retry (attempt 2) still retries its own downstream',
    async (kind) => {
      let leafCalls = 0;
      const leaf = await hop(kind, async (r) => {
        leafCalls++;
        if (leafCalls === 1) throw new Error('leaf blip');
        return r;
      });
      const toLeaf = client(leaf, FAST_RETRY);
      let midCalls = 0;
      const mid = await hop(kind, async (r) => {
        midCalls++;
        // The mid tier's own failure, not its downstream's: its caller may retry it.
        if (midCalls === 1) throw new Error('mid blip');
        return toLeaf.call(r);
      });
      const root = client(mid, FAST_RETRY);
      await expect(root.call({ message: 'hi' })).resolves.toEqual({ message: 'hi' });
      expect(mid.seen.map((s) => s.attempt)).toEqual([1, 2]);
      expect(leaf.seen.map((s) => s.attempt)).toEqual([1, 2]);
    },
  );
});

describe('outside a binding, and with propagate: false', () => {
  it.each(['grpc-js', 'nice-grpc', 'trpc'] as const)(
    "%s: the downstream sees its caller's own deadline, as before",
    async (kind) => {
      const leaf = await hop(kind, async (r) => r);
      const toLeaf = client(leaf);
      const optedOut = client(leaf, { propagate: false });
      const plain = await hop(
        kind,
        async (r) => {
          expect(currentInbound()).toBeUndefined();
          return toLeaf.call(r);
        },
        { bound: false },
      );
      const bound = await hop(kind, (r) => optedOut.call(r));
      const started = Date.now();
      await client(plain, { timeoutMs: 500 }).call({ message: 'plain' });
      await client(bound, { timeoutMs: 500 }).call({ message: 'bound' });
      // Both leaf calls ran under their own standard 10 s attempt deadline, not the root's 500 ms.
      for (const seen of leaf.seen) {
        expect(seen.deadline as number).toBeGreaterThan(started + 9_000);
      }
      expect(leaf.seen).toHaveLength(2);
    },
  );
});
