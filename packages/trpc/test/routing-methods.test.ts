import type { ChaosTrpcRouter } from '@breakwater/chaos';
import { isRoutingError } from '@breakwater/core';
import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { type RoutingLinkOptions, routingLink } from '../src/index.js';
import { batchLink, chaos, clientOf, errorOf } from './helpers.js';

// Per-procedure policy in routingLink, against real tRPC servers: what each server saw per procedure.

const backoff = { baseDelayMs: 1, jitter: 'none' } as const;
const TWO_FAILURES = { failureThreshold: 2, failureSpanMs: 0, window: false } as const;

async function routed(
  count: number,
  options: Omit<RoutingLinkOptions<ChaosTrpcRouter>, 'endpoints'>,
) {
  const servers = await Promise.all(
    Array.from({ length: count }, (_, i) => chaos({ name: `s${i + 1}` })),
  );
  const client = clientOf([
    routingLink<ChaosTrpcRouter>({
      selection: 'priority',
      ...options,
      endpoints: servers.map((s) => ({ id: s.stats().server, link: batchLink(s.url) })),
    }),
  ]);
  return { servers, client };
}

describe('routingLink methods: per-procedure policy against real servers', () => {
  it("runs an entry's retries on each endpoint; another procedure keeps the link's", async () => {
    const { servers, client } = await routed(2, {
      methods: { echo: { retry: { attempts: 3, backoff } } },
    });
    for (const s of servers) s.setFaults({ errorRate: 1 });

    await errorOf(client.echo.query('x'));
    await errorOf(client.slow.query({ ms: 0 }));

    for (const s of servers) {
      expect(s.stats().procedures.echo).toBe(3);
      expect(s.stats().procedures.slow).toBe(1);
    }
  });

  it("ends a call at its entry's timeoutMs: the server saw the request cancelled; another procedure is not cut", async () => {
    const { servers, client } = await routed(1, {
      timeoutMs: 5_000,
      methods: { slow: { timeoutMs: 150 } },
    });
    const started = performance.now();
    const error = await errorOf(client.slow.query({ ms: 2_000 }));
    const elapsed = performance.now() - started;

    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as Error).message).toMatch(/150 ms/);
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(elapsed).toBeLessThan(1_500);
    await expect.poll(() => servers[0]?.stats().observed[0]?.outcome).toBe('cancelled');
    // The entry's deadline is its own: an unlisted procedure runs past 150 ms.
    await expect(client.slow.query({ ms: 0 })).resolves.toMatchObject({ sleptMs: 0 });
    await expect(client.echo.query('ok')).resolves.toMatchObject({ value: 'ok' });
  });

  it("scopes an entry's circuits to its procedures: the other procedure still reaches the endpoint", async () => {
    const { servers, client } = await routed(1, { methods: { fail: { circuit: TWO_FAILURES } } });

    const errors: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      errors.push(await errorOf(client.fail.query({ code: 'SERVICE_UNAVAILABLE' })));
    }
    for (let i = 0; i < 3; i++) await client.echo.query(String(i));

    expect(servers[0]?.stats().procedures.fail).toBe(2);
    expect(servers[0]?.stats().procedures.echo).toBe(3);
    // The third was refused by the entry's open circuit, not sent.
    expect((errors[2] as Error).message).toBe('No provider succeeded (0 failed, 1 skipped)');
    expect(isRoutingError((errors[2] as Error).cause)).toBe(true);
  });

  it('an entry may make a mutation safe to repeat: the server saw it retried', async () => {
    const { servers, client } = await routed(1, {
      protection: { retry: { attempts: 2, backoff } },
      methods: { 'counter.*': { idempotent: true } },
    });
    servers[0]?.setFaults({ errorRate: 1 });
    await errorOf(client.counter.increment.mutate({ by: 1 }));
    expect(servers[0]?.stats().procedures['counter.increment']).toBe(2);
  });

  it('refuses bad entries at construction, naming the full option path', () => {
    const endpoints = [{ id: 'a', link: batchLink('http://127.0.0.1:1') }];
    const make = (methods: unknown) => routingLink({ endpoints, methods: methods as never });
    expect(() => make({ 'user/get': { timeoutMs: 100 } })).toThrow(
      /^routingLink: methods\["user\/get"\] is "user\/get", which matches no procedure/,
    );
    expect(() => make({ echo: { retry: { attemps: 3 } } })).toThrow(
      'routingLink: unknown option `methods["echo"].retry.attemps` — did you mean `methods["echo"].retry.attempts`?',
    );
    expect(() => make({ echo: { timeoutMs: -1 } })).toThrow(
      /^routingLink: methods\["echo"\]\.timeoutMs must be > 0/,
    );
    expect(() => make({ echo: { hedge: { attempts: 3 } } })).toThrow(
      /^routingLink: methods\["echo"\]\.hedge/,
    );
  });
});
