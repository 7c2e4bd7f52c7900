import { CALL_ID_HEADER, ECHO_SERVICE } from '@breakwater/chaos';
import { fixedRandom } from '@breakwater/core/time';
import { type ClientMiddleware, createClientFactory, Metadata, Status } from 'nice-grpc';
import { describe, expect, it } from 'vitest';
import { resilienceMiddleware } from '../src/index.js';
import { StampedMetadata } from '../src/internals/stamped-metadata.js';
import { channelTo, chaosServer, echoDefinition } from './helpers.js';

describe('StampedMetadata', () => {
  it("reads the caller's entries plus the stamped header, which replaces the caller's own", () => {
    const base = Metadata({ 'x-a': 'a', 'grpc-timeout': '5S', 'x-b-bin': new Uint8Array([1]) });
    const stamped = new StampedMetadata(base, 'grpc-timeout', '100m');
    expect(stamped.get('x-a')).toBe('a');
    expect(stamped.get('GRPC-Timeout')).toBe('100m');
    expect(stamped.getAll('grpc-timeout')).toEqual(['100m']);
    expect(stamped.has('x-b-bin') && stamped.has('grpc-timeout') && !stamped.has('x-c')).toBe(true);
    expect([...stamped]).toEqual([
      ['x-a', ['a']],
      ['x-b-bin', [new Uint8Array([1])]],
      ['grpc-timeout', ['100m']],
    ]);
    expect([...new StampedMetadata(undefined, 'k', 'v')]).toEqual([['k', ['v']]]);
  });

  it("writes go to a copy: the caller's metadata never changes", () => {
    const base = Metadata({ 'x-a': 'a' });
    const stamped = new StampedMetadata(base, 'grpc-timeout', '100m');
    stamped.set('x-a', 'changed').append('x-n', '1');
    stamped.delete('grpc-timeout');
    expect([...base]).toEqual([['x-a', ['a']]]);
    expect([...stamped]).toEqual([
      ['x-a', ['changed']],
      ['x-n', ['1']],
    ]);
    expect(stamped.get('grpc-timeout')).toBeUndefined();
    // The copy validates as a Metadata does.
    expect(() => stamped.set('bad key', 'v')).toThrow(/illegal characters/);
  });
});

describe('resilienceMiddleware with a middleware below that writes the metadata', () => {
  it('sends its writes with the deadline and attempt headers; the caller metadata is untouched', async () => {
    const server = await chaosServer({
      faults: [{ status: Status.UNAVAILABLE, firstAttempts: 1 }],
    });
    const below: ClientMiddleware = async function* rename(call, options) {
      options.metadata?.set(CALL_ID_HEADER, `${options.metadata.get(CALL_ID_HEADER)}-below`);
      return yield* call.next(call.request, options);
    };
    const client = createClientFactory()
      .use(below)
      .use(
        resilienceMiddleware({
          timeoutMs: 5_000,
          idempotent: [`/${ECHO_SERVICE}/Unary`],
          retry: { backoff: { baseDelayMs: 1, random: fixedRandom(0) } },
        }),
      )
      .create(echoDefinition(), channelTo(server.address));
    const metadata = Metadata({ [CALL_ID_HEADER]: 'c1' });
    expect(await client.Unary({ message: 'hi' }, { metadata })).toMatchObject({ attempt: 2 });
    expect([...metadata]).toEqual([[CALL_ID_HEADER, ['c1']]]);
    const seen = server.observed.map((o) => [
      o.callId,
      o.previousAttempts,
      o.deadline !== undefined,
    ]);
    expect(seen).toEqual([
      ['c1-below', undefined, true],
      ['c1-below', 1, true],
    ]);
  });
});

describe('resilienceMiddleware without retries', () => {
  it("still hands a listening caller the failed call's trailer and header", async () => {
    const server = await chaosServer({
      faults: [{ status: Status.RESOURCE_EXHAUSTED, pushbackMs: 10 }],
    });
    const client = createClientFactory()
      .use(resilienceMiddleware({ retry: false, circuit: false }))
      .create(echoDefinition(), channelTo(server.address));
    const trailers: unknown[] = [];
    const error = await client
      .Unary({}, { onTrailer: (t) => trailers.push(t.get('grpc-retry-pushback-ms')) })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: Status.RESOURCE_EXHAUSTED });
    expect(trailers).toEqual(['10']);
  });
});

describe('resilienceMiddleware under another middleware', () => {
  it('hands a unary result and error to a middleware above that delegates with yield*', async () => {
    const server = await chaosServer({ faults: [{ status: Status.INVALID_ARGUMENT, rate: 0 }] });
    const seen: string[] = [];
    const above: ClientMiddleware = async function* outer(call, options) {
      try {
        const result = yield* call.next(call.request, options);
        seen.push('returned');
        return result;
      } catch (error) {
        seen.push(`threw ${(error as { code?: number }).code}`);
        throw error;
      }
    };
    const client = createClientFactory()
      .use(resilienceMiddleware({ timeoutMs: 5_000, retry: false }))
      .use(above)
      .create(echoDefinition(), channelTo(server.address));
    expect(await client.Unary({ message: 'hi' })).toMatchObject({ message: 'hi' });
    server.setFaults([{ status: Status.INVALID_ARGUMENT }]);
    const error = await client.Unary({}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: Status.INVALID_ARGUMENT });
    expect(seen).toEqual(['returned', `threw ${Status.INVALID_ARGUMENT}`]);
  });
});
