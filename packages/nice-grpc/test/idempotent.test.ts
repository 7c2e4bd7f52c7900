import type { ResilienceWarning } from '@breakwater/core';
import { idempotentMethods } from '@breakwater/core/grpc';
import { Status } from 'nice-grpc';
import { describe, expect, it } from 'vitest';
import { resilienceMiddleware, retryMiddleware } from '../src/index.js';
import { callId, chaosServer, echoClient, echoDefinition, rejection } from './helpers.js';

const fast = { attempts: 3, backoff: { baseDelayMs: 5, jitter: 'none' as const } };

describe('idempotent: method selectors are checked at construction', () => {
  it('rejects a bare method name or a path without its leading slash, naming the entry', () => {
    expect(() => resilienceMiddleware({ idempotent: ['SayHello'] })).toThrow(
      /resilienceMiddleware: idempotent\[0\] is "SayHello", which matches no method: give a full method path \('\/pkg\.Service\/Method'\) or a service name \('pkg\.Service'\)/,
    );
    expect(() =>
      retryMiddleware({ idempotent: ['/hello.Greeter/SayHello', 'hello.Greeter/SayHello'] }),
    ).toThrow(/idempotent\[1\] .* did you mean "\/hello\.Greeter\/SayHello"\?/);
    // A string is not a list, even though it iterates.
    // @ts-expect-error a bare string where a list of selectors is expected
    expect(() => resilienceMiddleware({ idempotent: 'SayHello' })).toThrow(TypeError);
  });

  it('reports an entry that matches no method of a ts-proto definition', () => {
    const definition = echoDefinition();
    expect(() => idempotentMethods(definition, ['/breakwater.chaos.v1.Echo/Unary'])).not.toThrow();
    expect(() => idempotentMethods(definition, ['/breakwater.chaos.v1.Echo/Nope'])).toThrow(
      /idempotentMethods: also\[0\] is "\/breakwater\.chaos\.v1\.Echo\/Nope", which matches no method of the definition \(its services: breakwater\.chaos\.v1\.Echo\)/,
    );
  });

  it('retries a method a checked list names, at a real server', async () => {
    const server = await chaosServer({
      faults: [{ status: Status.UNAVAILABLE, firstAttempts: 1 }],
    });
    const idempotent = idempotentMethods(echoDefinition(), ['breakwater.chaos.v1.Echo']);
    const client = echoClient(server.address, resilienceMiddleware({ retry: fast, idempotent }));
    const reply = await client.UnaryUnsafe({ message: 'm' }, callId('listed'));
    expect(reply.attempt).toBe(2);
    expect(server.attempts('listed')).toBe(2);
  });
});

describe('no-idempotent-methods: warned only when a retry asked for will not happen', () => {
  it('says nothing for the standard retry; once per client when `retry` is given', async () => {
    const server = await chaosServer({
      faults: [{ status: Status.UNAVAILABLE, firstAttempts: 1 }],
    });
    const standard: ResilienceWarning[] = [];
    const plain = echoClient(
      server.address,
      resilienceMiddleware({ onWarning: (w) => standard.push(w) }),
    );
    await rejection(plain.UnaryUnsafe({}, callId('standard')));
    expect(server.attempts('standard')).toBe(1);
    // Not retrying a method not known idempotent is what a client without `retry` wants.
    expect(standard).toEqual([]);

    const asked: string[] = [];
    const client = echoClient(
      server.address,
      resilienceMiddleware({ retry: fast, onWarning: (w) => asked.push(String(w.path)) }),
    );
    await rejection(client.UnaryUnsafe({}, callId('a')));
    await rejection(client.UnaryUnsafe({}, callId('b')));
    expect(server.attempts('a')).toBe(1);
    expect(asked).toEqual(['/breakwater.chaos.v1.Echo/UnaryUnsafe']);
  });
});
