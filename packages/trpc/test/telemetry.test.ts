import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Telemetry } from '@breakwater/core';
import { createTRPCClient, httpLink } from '@trpc/client';
import { initTRPC, TRPCError } from '@trpc/server';
import { createHTTPServer } from '@trpc/server/adapters/standalone';
import { describe, expect, it } from 'vitest';
import { createStatusPreservingFetch, resilienceLink } from '../src/index.js';

/**
 * A tRPC standalone server whose `fail` procedure throws `CONFLICT`, and
 * whose error formatter gives every other failure a code of its own choosing
 * (`CODE_X`, `CODE_XX`, ...), as a hostile or buggy server may.
 */
async function codeInventingServer() {
  let executions = 0;
  const t = initTRPC.create({
    errorFormatter: ({ shape, error }) =>
      error.code === 'CONFLICT'
        ? shape
        : { ...shape, data: { ...shape.data, code: `CODE_${'X'.repeat(executions)}` } },
  });
  const router = t.router({
    fail: t.procedure.mutation(() => {
      executions++;
      throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'invented code' });
    }),
    conflict: t.procedure.mutation(() => {
      executions++;
      throw new TRPCError({ code: 'CONFLICT', message: 'known code' });
    }),
  });
  const server = createHTTPServer({ router });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    router,
    url: `http://127.0.0.1:${port}`,
    executions: () => executions,
    [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('resilienceLink telemetry: error.type stays bounded whatever codes a server sends', () => {
  it('reports a code tRPC does not define as _OTHER (known codes as themselves)', async () => {
    await using server = await codeInventingServer();
    const types: (string | undefined)[] = [];
    const telemetry: Telemetry = {
      startCall: () => ({ end: (_outcome, _attempts, errorType) => types.push(errorType) }),
    };
    const client = createTRPCClient<typeof server.router>({
      links: [
        // No circuit: it would refuse calls after five failures, and refusals send nothing.
        resilienceLink({ telemetry, circuit: false }),
        httpLink({ url: server.url, fetch: createStatusPreservingFetch() }),
      ],
    });
    for (let i = 0; i < 20; i++) await client.fail.mutate().catch(() => undefined);
    await client.conflict.mutate().catch(() => undefined);

    // Mutations are not repeated: the server ran each call once.
    expect(server.executions()).toBe(21);
    expect(new Set(types.slice(0, 20))).toEqual(new Set(['_OTHER']));
    expect(types[20]).toBe('CONFLICT');
  });
});
