// The deadline the next hop's server sees, for every send of an outbound call
// and not only its first: a retried attempt, a hedge, and a call that waited
// for a bulkhead slot, carry the time left then (the inbound deadline less the
// margin), not the time left when the call started. Each adapter's client, on
// real servers of each framework it can call.
import { currentInbound } from '@breakwater/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type Kind, opener, sleep } from './hops.js';

const { hop, client, closeAll } = opener();
afterEach(closeAll);

const MARGIN_MS = 5;
const ROOT_MS = 1_500;

/** [the mid tier's client, the leaf server it calls]: every pair that speaks one wire. */
const PAIRS = [
  ['grpc-js', 'grpc-js'],
  ['grpc-js', 'nice-grpc'],
  ['nice-grpc', 'nice-grpc'],
  ['nice-grpc', 'grpc-js'],
  ['trpc', 'trpc'],
] as const satisfies readonly (readonly [Kind, Kind])[];

// Hops share one process on a loaded machine: transit only ever makes a relative deadline later,
// so the best of three root calls is the deadline as sent.
const best = (errors: number[]) => Math.min(...errors.map(Math.abs));

describe.each(PAIRS)('a %s client calling a %s server from a bound handler', (via, leafKind) => {
  it('every retried attempt carries the inbound deadline less the margin', async () => {
    // Each attempt takes 40 ms and the first two fail: attempt 3 leaves about 120 ms after the call started.
    const leaf = await hop(leafKind, async (r) => {
      await sleep(40);
      if ((currentInbound()?.attempt ?? 1) < 3) throw new Error('leaf blip');
      return r;
    });
    const toLeaf = client(
      leaf,
      {
        attemptTimeoutMs: false,
        retry: { attempts: 3, backoff: { baseDelayMs: 20, maxDelayMs: 20 } },
      },
      via,
    );
    const mid = await hop(via, (r) => toLeaf.call(r));
    const root = client(mid, { timeoutMs: ROOT_MS, retry: false });
    const roots = 3;
    for (let i = 0; i < roots; i++) await root.call({ message: `r${i}` });
    expect(leaf.seen.map((s) => s.attempt)).toEqual([1, 2, 3, 1, 2, 3, 1, 2, 3]);
    for (let attempt = 1; attempt <= 3; attempt++) {
      const errors = mid.seen.map((m, i) => {
        const seen = leaf.seen[i * 3 + attempt - 1]?.deadline as number;
        return seen - ((m.deadline as number) - MARGIN_MS);
      });
      expect(best(errors), `attempt ${attempt}`).toBeLessThanOrEqual(5);
    }
  });

  it('a hedge carries the inbound deadline less the margin', async () => {
    // Attempt 1 answers after 150 ms; the hedge, sent 40 ms in, answers at once.
    const leaf = await hop(leafKind, async (r) => {
      if ((currentInbound()?.attempt ?? 1) === 1) await sleep(150);
      return r;
    });
    const toLeaf = client(
      leaf,
      { attemptTimeoutMs: false, hedge: { delayMs: 40, attempts: 2 } },
      via,
    );
    const mid = await hop(via, (r) => toLeaf.call(r));
    const root = client(mid, { timeoutMs: ROOT_MS, retry: false });
    const roots = 3;
    for (let i = 0; i < roots; i++) await root.call({ message: `r${i}` });
    expect(leaf.seen.map((s) => s.attempt)).toEqual([1, 2, 1, 2, 1, 2]);
    for (let attempt = 1; attempt <= 2; attempt++) {
      const errors = mid.seen.map((m, i) => {
        const seen = leaf.seen[i * 2 + attempt - 1]?.deadline as number;
        return seen - ((m.deadline as number) - MARGIN_MS);
      });
      expect(best(errors), `attempt ${attempt}`).toBeLessThanOrEqual(5);
    }
  });

  it('a call that waited for a bulkhead slot carries the inbound deadline less the margin', async () => {
    const leaf = await hop(leafKind, async (r) => {
      await sleep(60);
      return r;
    });
    // One slot: of the handler's two calls at once, the second waits 60 ms for it.
    const toLeaf = client(
      leaf,
      { attemptTimeoutMs: false, concurrency: { limit: 1, maxQueue: 4 } },
      via,
    );
    const mid = await hop(via, async (r) => {
      await Promise.all([toLeaf.call(r), toLeaf.call(r)]);
      return r;
    });
    const root = client(mid, { timeoutMs: ROOT_MS, retry: false });
    const roots = 3;
    for (let i = 0; i < roots; i++) await root.call({ message: `r${i}` });
    expect(leaf.seen).toHaveLength(2 * roots);
    for (const call of [0, 1]) {
      const errors = mid.seen.map((m, i) => {
        const seen = leaf.seen[i * 2 + call]?.deadline as number;
        return seen - ((m.deadline as number) - MARGIN_MS);
      });
      expect(best(errors), `call ${call + 1}`).toBeLessThanOrEqual(5);
    }
  });
});
