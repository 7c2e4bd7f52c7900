import {
  CALL_ID_HEADER,
  ECHO_SERVICE,
  type EchoRequest,
  type EchoResponse,
  type GrpcChaosServer,
  type GrpcChaosServerOptions,
  loadEchoPackageDefinition,
  startGrpcChaosServer,
} from '@breakwater/chaos';
import type { MethodDefinition as GrpcJsMethodDefinition } from '@grpc/grpc-js';
import {
  type Channel,
  type ChannelOptions,
  type Client,
  type ClientMiddleware,
  createChannel,
  createClientFactory,
  Metadata,
  type MethodDefinition,
} from 'nice-grpc';
import { afterEach } from 'vitest';

type MessageType<T> = {
  encode(message: T): { finish(): Uint8Array };
  decode(input: Uint8Array): T;
};

type EchoMethod<RequestStream extends boolean, ResponseStream extends boolean> = {
  name: string;
  requestType: MessageType<EchoRequest>;
  requestStream: RequestStream;
  responseType: MessageType<EchoResponse>;
  responseStream: ResponseStream;
  options: { idempotencyLevel?: 'IDEMPOTENT' | 'NO_SIDE_EFFECTS' };
};

/**
 * The chaos Echo service shaped like a ts-proto definition — the only shape
 * whose method options (`idempotencyLevel`) survive nice-grpc's
 * normalisation: it converts any `{ path }` map as a grpc-js definition with
 * `options: {}`.
 */
export interface EchoDefinition {
  name: 'Echo';
  fullName: typeof ECHO_SERVICE;
  methods: {
    Unary: EchoMethod<false, false>;
    UnaryUnsafe: EchoMethod<false, false>;
    ServerStream: EchoMethod<false, true>;
    ClientStream: EchoMethod<true, false>;
    Bidi: EchoMethod<true, true>;
  };
}

type LoadedMethod = GrpcJsMethodDefinition<EchoRequest, EchoResponse> & {
  originalName?: string;
  options?: { idempotency_level?: string };
};

function messageType<T>(serialize: (value: T) => Buffer, deserialize: (b: Buffer) => T) {
  return {
    encode: (message: T) => ({ finish: () => new Uint8Array(serialize(message)) }),
    decode: (input: Uint8Array) => deserialize(Buffer.from(input)),
  };
}

/** Builds the ts-proto-shaped definition from proto-loader's, keeping each method's `idempotency_level`. */
export function echoDefinition(): EchoDefinition {
  const loaded = loadEchoPackageDefinition()[ECHO_SERVICE] as unknown as Record<
    string,
    LoadedMethod
  >;
  const methods: Record<string, EchoMethod<boolean, boolean>> = {};
  for (const [name, m] of Object.entries(loaded)) {
    const level = m.options?.idempotency_level;
    methods[name] = {
      name,
      requestType: messageType(m.requestSerialize, m.requestDeserialize),
      requestStream: m.requestStream,
      responseType: messageType(m.responseSerialize, m.responseDeserialize),
      responseStream: m.responseStream,
      options:
        level === 'IDEMPOTENT' || level === 'NO_SIDE_EFFECTS' ? { idempotencyLevel: level } : {},
    };
  }
  return { name: 'Echo', fullName: ECHO_SERVICE, methods } as unknown as EchoDefinition;
}

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/** Runs `fn` after the current test (servers, channels). */
export function onCleanup(fn: () => unknown): void {
  cleanup.push(fn);
}

/** A chaos server closed after the test. */
export async function chaosServer(options: GrpcChaosServerOptions = {}): Promise<GrpcChaosServer> {
  const server = await startGrpcChaosServer(options);
  cleanup.push(() => server.close());
  return server;
}

/** A channel to `address` closed after the test. */
export function channelTo(address: string, options?: ChannelOptions): Channel {
  const channel = createChannel(address, undefined, options);
  cleanup.push(() => channel.close());
  return channel;
}

/** A nice-grpc Echo client through `middleware` (closed after the test). */
export function echoClient<Ext>(
  address: string,
  middleware: ClientMiddleware<Ext>,
): Client<EchoDefinition, {} & Ext> {
  return createClientFactory().use(middleware).create(echoDefinition(), channelTo(address));
}

/** Call options naming the call, so the server counts its attempts. */
export function callId(id: string): { metadata: Metadata } {
  return { metadata: Metadata({ [CALL_ID_HEADER]: id }) };
}

/** Resolves after `ms` of real time. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Settles `promise` into the thrown error (fails when it resolves). */
export async function rejection(
  promise: Promise<unknown>,
): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error('expected the call to reject');
}

/** What nice-grpc makes of a proto-loader (grpc-js) definition: `{ path }` methods, options dropped. */
export type PathShapedEchoDefinition = {
  Unary: MethodDefinition<EchoRequest, EchoRequest, EchoResponse, EchoResponse, false, false>;
};

/** The Echo `Unary` method as proto-loader gives it (its `options.idempotency_level` included). */
export function protoLoaderEchoDefinition(): PathShapedEchoDefinition {
  const loaded = loadEchoPackageDefinition()[ECHO_SERVICE] as unknown as Record<
    string,
    LoadedMethod
  >;
  return { Unary: loaded.Unary } as unknown as PathShapedEchoDefinition;
}
