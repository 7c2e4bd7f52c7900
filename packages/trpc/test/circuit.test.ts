import { createCircuitBreaker, isCircuitOpenError } from '@breakwater/core';
import { systemSleep } from '@breakwater/core/time';
import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { circuitBreakerLink, retryLink } from '../src/index.js';
import { batchLink, chaos, clientOf, errorOf } from './helpers.js';

describe('circuitBreakerLink', () => {
  it('opens after the threshold and the server stops receiving calls', async () => {
    const server = await chaos({ faults: { errorRate: 1 } });
    const states: string[] = [];
    const breaker = createCircuitBreaker({
      failureSpanMs: 0,
      failureThreshold: 3,
      openDurationMs: 60_000,
    });
    breaker.onStateChange((e) => states.push(e.to));
    const client = clientOf([circuitBreakerLink(breaker), batchLink(server.url)]);
    const errors: unknown[] = [];
    for (let i = 0; i < 10; i++) errors.push(await errorOf(client.echo.query(String(i))));
    expect(server.stats().requests).toBe(3);
    expect(states).toEqual(['open']);
    const refused = errors.slice(3);
    expect(refused.every((e) => e instanceof TRPCClientError)).toBe(true);
    expect(refused.every((e) => isCircuitOpenError((e as Error).cause))).toBe(true);
    expect(((refused[0] as Error).cause as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(
      50_000,
    );
  });

  it('4xx domain errors never open it', async () => {
    const server = await chaos();
    const client = clientOf([
      circuitBreakerLink({ failureSpanMs: 0, failureThreshold: 2, openDurationMs: 60_000 }),
      batchLink(server.url),
    ]);
    for (let i = 0; i < 4; i++) await errorOf(client.fail.query({ code: 'NOT_FOUND' }));
    await expect(client.echo.query('ok')).resolves.toMatchObject({ value: 'ok' });
    expect(server.stats().procedures.fail).toBe(4);
  });

  it('lets one probe through after the open duration and closes on success', async () => {
    const server = await chaos({ faults: { errorRate: 1 } });
    const client = clientOf([
      circuitBreakerLink({ failureSpanMs: 0, failureThreshold: 1, openDurationMs: 50 }),
      batchLink(server.url),
    ]);
    await errorOf(client.echo.query('1'));
    await errorOf(client.echo.query('2'));
    expect(server.stats().requests).toBe(1);
    server.setFaults({});
    await new Promise((r) => setTimeout(r, 60));
    await expect(client.echo.query('3')).resolves.toMatchObject({ value: '3' });
    await expect(client.echo.query('4')).resolves.toMatchObject({ value: '4' });
    expect(server.stats().requests).toBe(3);
  });

  it('a half-open probe is not retried by a retryLink below the circuit', async () => {
    const server = await chaos({ faults: { errorRate: 1 } });
    const client = clientOf([
      circuitBreakerLink({ failureSpanMs: 0, failureThreshold: 1, openDurationMs: 100 }),
      retryLink({ attempts: 3, backoff: { baseDelayMs: 1, jitter: 'none' } }),
      batchLink(server.url),
    ]);
    // Admitted while closed: the retryLink makes its 3 attempts, then the circuit opens.
    await errorOf(client.echo.query('opens'));
    expect(server.stats().requests).toBe(3);
    await systemSleep(150);
    // The probe: one attempt (the circuit marks it in op.context), and the circuit re-opens.
    await errorOf(client.echo.query('probe'));
    expect(server.stats().requests).toBe(4);
    await errorOf(client.echo.query('refused'));
    expect(server.stats().requests).toBe(4);
  });

  it('a probe refused a connection is neutral: the next call probes at once, not an open duration later', async () => {
    const server = await chaos();
    const client = clientOf([
      circuitBreakerLink({ failureSpanMs: 0, failureThreshold: 1, openDurationMs: 100 }),
      batchLink(server.url),
    ]);
    await server.stop();
    await errorOf(client.echo.query('opens'));
    await systemSleep(150);
    const probe = (await errorOf(client.echo.query('probe'))) as Error;
    expect(isCircuitOpenError(probe.cause)).toBe(false);
    // Still half-open: this call is a probe too, not refused for another 100 ms.
    const next = (await errorOf(client.echo.query('next'))) as Error;
    expect(isCircuitOpenError(next.cause)).toBe(false);
    await server.start();
    await expect(client.echo.query('back')).resolves.toMatchObject({ value: 'back' });
  });
});
