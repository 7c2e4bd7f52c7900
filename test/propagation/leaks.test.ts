// 1,000 inbound calls at once, each fanning out to 20 outbound calls, leave
// nothing behind: no listener on an inbound signal, no timer, no ambient
// context, and no MaxListenersExceededWarning on the way. Each server binding,
// its handler calling with its own framework's Breakwater client.
import { getEventListeners } from 'node:events';
import { currentInbound, type InboundCall } from '@breakwater/core';
import { expect, it } from 'vitest';
import { clientOf, type Kind, startHop } from './hops.js';

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

it.each<Kind>(['grpc-js', 'nice-grpc', 'trpc'])(
  '%s binding: 1,000 concurrent inbound calls × 20 outbound calls leave no listener, timer or context',
  async (kind) => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    const inbounds: InboundCall[] = [];
    // Listeners left on each inbound signal once its 20 outbound calls are done (the handler still runs).
    const leftOver: number[] = [];
    const leaf = await startHop(kind, async (r) => r, { record: false });
    // 20,000 calls at once saturate this process's own event loop, so every call is slow together;
    // a derived attempt cut (3 x the p99 learned as the burst starts) would cut and retry them
    // and lose some to the budget. This test is about what calls leave behind, not about that.
    const toLeaf = clientOf(leaf, { concurrency: false, attemptTimeoutMs: false });
    const mid = await startHop(
      kind,
      async (r) => {
        inbounds.push(currentInbound() as InboundCall);
        await Promise.all(Array.from({ length: 20 }, () => toLeaf.call(r)));
        leftOver.push(getEventListeners((currentInbound() as InboundCall).signal, 'abort').length);
        return r;
      },
      { record: false },
    );
    const root = clientOf(mid, { concurrency: false, attemptTimeoutMs: false });
    try {
      await root.call({ message: 'warm-up' });
      const before = timers();
      await Promise.all(Array.from({ length: 1_000 }, (_, i) => root.call({ message: `r${i}` })));
      await new Promise((r) => setTimeout(r, 50));
      expect(inbounds).toHaveLength(1_001);
      expect(leftOver.filter((n) => n > 0)).toEqual([]);
      for (const inbound of inbounds)
        expect(getEventListeners(inbound.signal, 'abort')).toHaveLength(0);
      expect(timers()).toBeLessThanOrEqual(before);
      expect(currentInbound()).toBeUndefined();
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      root.close();
      toLeaf.close();
      await mid.close();
      await leaf.close();
    }
  },
  120_000,
);
