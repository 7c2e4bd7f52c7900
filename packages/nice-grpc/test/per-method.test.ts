import { ECHO_METHODS } from '@breakwater/chaos';
import { Status } from 'nice-grpc';
import { describe, expect, it } from 'vitest';
import { resilienceMiddleware } from '../src/index.js';
import { callId, chaosServer, echoClient, rejection } from './helpers.js';

const fast = { baseDelayMs: 5, jitter: 'none' } as const;
const failing = { faults: [{ status: Status.UNAVAILABLE }] };
const TWO_FAILURES = { failureThreshold: 2, failureSpanMs: 0, window: false } as const;

describe('resilienceMiddleware methods: per-method policy against a real server', () => {
  it('runs a method entry merged over the client options: the server sees its attempts and deadline', async () => {
    const server = await chaosServer(failing);
    const middleware = resilienceMiddleware({
      timeoutMs: 5_000,
      retry: { attempts: 2, backoff: fast },
      circuit: false,
      methods: {
        [ECHO_METHODS.unary]: { retry: { attempts: 4 }, timeoutMs: 1_000 },
        [ECHO_METHODS.unaryUnsafe]: { idempotent: true },
      },
    });
    const client = echoClient(server.address, middleware);

    await rejection(client.Unary({}, callId('entry')));
    await rejection(client.UnaryUnsafe({}, callId('marked')));

    expect(server.attempts('entry')).toBe(4);
    // Its entry marks it safe to repeat; the attempts are the client's.
    expect(server.attempts('marked')).toBe(2);
    const first = (id: string) =>
      server.observed.find((o) => o.callId === id)?.deadlineRemainingMs as number;
    expect(first('entry')).toBeLessThanOrEqual(1_000);
    expect(first('entry')).toBeGreaterThan(500);
    expect(first('marked')).toBeGreaterThan(1_000);
  });

  it("lets an entry's idempotent: false win over the definition's IDEMPOTENT", async () => {
    const server = await chaosServer(failing);
    const client = echoClient(
      server.address,
      resilienceMiddleware({
        retry: { attempts: 3, backoff: fast },
        circuit: false,
        methods: { 'breakwater.chaos.v1.Echo': { idempotent: false } },
      }),
    );
    const plain = echoClient(
      server.address,
      resilienceMiddleware({ retry: { attempts: 3, backoff: fast }, circuit: false }),
    );
    await rejection(client.Unary({}, callId('unmarked')));
    await rejection(plain.Unary({}, callId('definition')));
    expect(server.attempts('unmarked')).toBe(1);
    expect(server.attempts('definition')).toBe(3);
  });

  it("scopes an entry's circuit to its method: the other method still reaches the server", async () => {
    const server = await chaosServer(failing);
    const client = echoClient(
      server.address,
      resilienceMiddleware({
        retry: false,
        circuit: false,
        methods: { [ECHO_METHODS.unaryUnsafe]: { circuit: TWO_FAILURES } },
      }),
    );
    for (let i = 0; i < 3; i++) await rejection(client.UnaryUnsafe({}));
    for (let i = 0; i < 3; i++) await rejection(client.Unary({}));
    expect(server.total('UnaryUnsafe')).toBe(2);
    expect(server.total('Unary')).toBe(3);
  });

  it('refuses bad entries at construction, naming the full option path', () => {
    expect(() =>
      resilienceMiddleware({ methods: { '/pkg.Svc/Get': { retry: { attemps: 3 } as never } } }),
    ).toThrow(
      'resilienceMiddleware: unknown option `methods["/pkg.Svc/Get"].retry.attemps` — did you mean `methods["/pkg.Svc/Get"].retry.attempts`?',
    );
    expect(() => resilienceMiddleware({ methods: { 'pkg.Svc/Get': {} } })).toThrow(
      /^resilienceMiddleware: methods\["pkg\.Svc\/Get"\] is "pkg\.Svc\/Get", which matches no method: a full method path starts with '\/'/,
    );
    expect(() =>
      resilienceMiddleware({
        methods: { 'pkg.Svc': { circuit: { failureTreshold: 1 } as never } },
      }),
    ).toThrow(
      /^resilienceMiddleware: unknown option `methods\["pkg\.Svc"\]\.circuit\.failureTreshold`/,
    );
  });
});
