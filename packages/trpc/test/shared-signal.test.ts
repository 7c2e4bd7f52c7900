import { getEventListeners } from 'node:events';
import type { ChaosTrpcRouter, ChaosTrpcServer } from '@breakwater/chaos';
import type { TRPCLink } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resilienceLink, routingLink } from '../src/index.js';
import { batchLink, chaos, clientOf } from './helpers.js';

// Node warns once per signal, on a later tick: every warning of the file is collected.
const warnings: string[] = [];
const onWarning = (w: Error) => {
  if (w.name === 'MaxListenersExceededWarning') warnings.push(w.message);
};
beforeAll(() => {
  process.on('warning', onWarning);
});
afterAll(() => {
  process.off('warning', onWarning);
});

/** 50 slow queries at once through `links`, all with one caller signal: its listeners while they run and after. */
async function fiftyCallsOneSignal(servers: ChaosTrpcServer[], links: TRPCLink<ChaosTrpcRouter>[]) {
  const client = clientOf(links);
  const ac = new AbortController();
  const calls = Promise.allSettled(
    Array.from({ length: 50 }, () => client.slow.query({ ms: 200 }, { signal: ac.signal })),
  );
  await new Promise((r) => setTimeout(r, 100));
  const seen = servers.map((s) => s.stats().procedures.slow ?? 0).reduce((a, b) => a + b);
  const whileRunning = getEventListeners(ac.signal, 'abort').length;
  const succeeded = (await calls).filter((c) => c.status === 'fulfilled').length;
  await new Promise((r) => setImmediate(r));
  return { seen, whileRunning, succeeded, after: getEventListeners(ac.signal, 'abort').length };
}

describe('calls sharing one caller signal', () => {
  it('resilienceLink: 50 pending calls put one listener on the signal, none once settled', async () => {
    const server = await chaos();
    const result = await fiftyCallsOneSignal(
      [server],
      [resilienceLink({ retry: false }), batchLink(server.url)],
    );
    // httpBatchLink listens per operation on the signal it is given: not the caller's.
    expect(result).toEqual({ seen: 50, whileRunning: 1, succeeded: 50, after: 0 });
    expect(warnings).toEqual([]);
  });

  it('routingLink: 50 pending calls put one listener on the signal, none once settled', async () => {
    const servers = [await chaos(), await chaos()];
    const link = routingLink({
      endpoints: servers.map((s, i) => ({ id: `s${i}`, link: batchLink(s.url) })),
      selection: 'round-robin',
    });
    const result = await fiftyCallsOneSignal(servers, [link]);
    expect(result).toEqual({ seen: 50, whileRunning: 1, succeeded: 50, after: 0 });
    expect(warnings).toEqual([]);
  });
});
