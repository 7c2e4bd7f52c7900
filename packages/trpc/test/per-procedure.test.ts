import { isCircuitOpenError } from '@breakwater/core';
import { describe, expect, it } from 'vitest';
import { resilienceLink } from '../src/index.js';
import { batchLink, chaos, clientOf, errorOf } from './helpers.js';

// Per-procedure policy in resilienceLink, against a real tRPC server: each
// procedure has its own circuit, and a `methods` entry tunes one procedure.

const CIRCUIT = { failureSpanMs: 0, failureThreshold: 3, openDurationMs: 60_000 };

describe('resilienceLink per procedure', () => {
  it('one broken procedure opens only its own circuit: the healthy one is still sent', async () => {
    const server = await chaos();
    const client = clientOf([
      resilienceLink({ retry: false, circuit: CIRCUIT }),
      batchLink(server.url),
    ]);
    try {
      const errors: unknown[] = [];
      for (let i = 0; i < 5; i++) {
        errors.push(await errorOf(client.fail.query({ code: 'INTERNAL_SERVER_ERROR' })));
      }
      // Three failures open `fail`'s circuit: the last two never reach the server.
      expect(server.stats().procedures.fail).toBe(3);
      expect(isCircuitOpenError((errors[4] as Error).cause)).toBe(true);
      await expect(client.echo.query('ok')).resolves.toMatchObject({ value: 'ok' });
      expect(server.stats().procedures.echo).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('a methods entry applies to its procedure only (retry attempts seen at the server)', async () => {
    const server = await chaos();
    const client = clientOf([
      resilienceLink({
        retry: false,
        circuit: false,
        methods: { fail: { retry: { attempts: 3, backoff: { baseDelayMs: 1 } } } },
      }),
      batchLink(server.url),
    ]);
    try {
      await errorOf(client.fail.query({ code: 'SERVICE_UNAVAILABLE' }));
      expect(server.stats().procedures.fail).toBe(3);
      server.setFaults({ errorRate: 1 });
      await errorOf(client.echo.query('once'));
      expect(server.stats().procedures.echo).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('refuses an unknown option inside a methods entry, naming its path', () => {
    expect(() =>
      resilienceLink({ methods: { 'user.get': { retry: { attemps: 2 } as never } } }),
    ).toThrow(/methods\["user\.get"\]\.retry\.attemps/);
  });
});
