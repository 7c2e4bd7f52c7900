import { ECHO_METHODS, ECHO_SERVICE, echoUnary } from '@breakwater/chaos';
import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { echoSetup, only } from './helpers.js';

const fast = { baseDelayMs: 5, strategy: 'exponential', maxDelayMs: 20, jitter: 'none' } as const;
const failing = { faults: [{ status: status.UNAVAILABLE }] };
const TWO_FAILURES = { failureThreshold: 2, failureSpanMs: 0, window: false } as const;

describe('resilienceInterceptor methods: per-method policy against a real server', () => {
  it('runs a method entry merged over the client options: the server sees its attempts and deadline', async () => {
    const interceptor = only({
      timeoutMs: 5_000,
      retry: { attempts: 2, backoff: fast },
      idempotent: [ECHO_SERVICE],
      methods: { [ECHO_METHODS.unary]: { retry: { attempts: 4 }, timeoutMs: 1_000 } },
    });
    const { server, client } = await echoSetup([interceptor], failing);

    expect((await echoUnary(client, {}, { callId: 'entry' })).ok).toBe(false);
    const other = await echoUnary(client, {}, { callId: 'client', method: 'UnaryUnsafe' });
    expect(other.ok).toBe(false);

    // The entry's attempts, with the client's backoff merged in; the client's elsewhere.
    expect(server.attempts('entry')).toBe(4);
    expect(server.attempts('client')).toBe(2);
    const first = (callId: string) =>
      server.observed.find((o) => o.callId === callId)?.deadlineRemainingMs as number;
    expect(first('entry')).toBeLessThanOrEqual(1_000);
    expect(first('entry')).toBeGreaterThan(500);
    expect(first('client')).toBeGreaterThan(1_000);
  });

  it('takes the most specific entry alone: a method entry is not layered over its service entry', async () => {
    const interceptor = only({
      retry: { attempts: 2, backoff: fast },
      methods: {
        [ECHO_SERVICE]: { idempotent: true, retry: { attempts: 3 } },
        [ECHO_METHODS.unaryUnsafe]: { timeoutMs: 2_000 },
      },
    });
    const { server, client } = await echoSetup([interceptor], failing);

    await echoUnary(client, {}, { callId: 'service' });
    await echoUnary(client, {}, { callId: 'method', method: 'UnaryUnsafe' });

    expect(server.attempts('service')).toBe(3);
    // Its own entry says nothing of idempotency, so the client's (none) holds: one attempt.
    expect(server.attempts('method')).toBe(1);
  });

  it("scopes an entry's circuit to its method: the other method still reaches the server", async () => {
    const interceptor = only({
      methods: { [ECHO_METHODS.unaryUnsafe]: { circuit: TWO_FAILURES } },
    });
    const { server, client } = await echoSetup([interceptor], failing);

    for (let i = 0; i < 3; i++) await echoUnary(client, {}, { method: 'UnaryUnsafe' });
    for (let i = 0; i < 3; i++) await echoUnary(client, {});

    expect(server.total('UnaryUnsafe')).toBe(2);
    expect(server.total('Unary')).toBe(3);
    expect(interceptor.circuitFor(ECHO_METHODS.unaryUnsafe)?.state).toBe('open');
    expect(interceptor.circuitFor(ECHO_METHODS.unary)).toBeUndefined();
  });

  it('refuses bad entries at construction, naming the full option path', () => {
    expect(() => only({ methods: { '/pkg.Svc/Get': { retry: { attemps: 3 } as never } } })).toThrow(
      'resilienceInterceptor: unknown option `methods["/pkg.Svc/Get"].retry.attemps` — did you mean `methods["/pkg.Svc/Get"].retry.attempts`?',
    );
    expect(() => only({ methods: { SayHello: { timeoutMs: 100 } } })).toThrow(
      /^resilienceInterceptor: methods\["SayHello"\] is "SayHello", which matches no method: give a full method path/,
    );
    expect(() => only({ methods: { 'pkg.Svc': { budget: false } as never } })).toThrow(
      'resilienceInterceptor: unknown option `methods["pkg.Svc"].budget`',
    );
    expect(() => only({ methods: { 'pkg.Svc': { hedge: { attempts: 3 } } } })).toThrow(
      /^resilienceInterceptor: methods\["pkg\.Svc"\]\.hedge\.delayMs /,
    );
    expect(() => only({ methods: { 'pkg.Svc': { idempotent: 'yes' as never } } })).toThrow(
      'resilienceInterceptor: methods["pkg.Svc"].idempotent must be a boolean',
    );
  });
});
