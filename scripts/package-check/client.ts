// A consumer of the packed tarballs, as a user would write it: one real client
// per adapter against a real server of the framework itself. The same source is
// compiled as ESM (node16), as CommonJS (node16, emitted as `require`) and
// bundled with esbuild (moduleResolution bundler). Run from the project root.
import { strict as assert } from 'node:assert';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runProbe } from '@breakwater/core/internal';
import { tcpProbe } from '@breakwater/core/node';
import { disableGrpcRetries, idempotentMethods, resilienceInterceptor } from '@breakwater/grpc-js';
import { grpcHealthProbe } from '@breakwater/grpc-js/health';
import { resilienceMiddleware } from '@breakwater/nice-grpc';
import { resilienceLink } from '@breakwater/trpc';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { createTRPCClient, httpLink } from '@trpc/client';
import { initTRPC } from '@trpc/server';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import { HealthImplementation } from 'grpc-health-check';
import { createChannel, createClientFactory, Metadata } from 'nice-grpc';

interface SayReply {
  message: string;
  attempt: number;
}
type SayCallback = (error: grpc.ServiceError | null, reply?: SayReply) => void;
interface EchoClient extends grpc.Client {
  Say(request: { message: string }, metadata: grpc.Metadata, callback: SayCallback): void;
}

const definition = loadSync('echo.proto');
const attempts = new Map<string, number>();
/** Counts the attempts of one call id; the first attempt of every call fails. */
function attempt(callId: string): number {
  const n = (attempts.get(callId) ?? 0) + 1;
  attempts.set(callId, n);
  return n;
}

async function startGrpcServer(): Promise<{ server: grpc.Server; address: string }> {
  const server = new grpc.Server();
  const echo = definition['check.Echo'] as grpc.ServiceDefinition;
  server.addService(echo, {
    Say(
      call: grpc.ServerUnaryCall<{ message: string }, SayReply>,
      callback: grpc.sendUnaryData<SayReply>,
    ) {
      const n = attempt(String(call.metadata.get('x-call-id')[0]));
      if (n === 1) callback({ code: grpc.status.UNAVAILABLE, details: 'first attempt fails' });
      else callback(null, { message: call.request.message, attempt: n });
    },
  });
  new HealthImplementation({ '': 'SERVING' }).addToServer(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return { server, address: `127.0.0.1:${port}` };
}

async function checkGrpcJs(address: string): Promise<void> {
  const Echo = grpc.loadPackageDefinition(definition).check as unknown as {
    Echo: new (address: string, creds: grpc.ChannelCredentials, options: object) => EchoClient;
  };
  const client = new Echo.Echo(address, grpc.credentials.createInsecure(), {
    ...disableGrpcRetries,
    interceptors: [
      resilienceInterceptor({
        idempotent: idempotentMethods(definition),
        timeoutMs: 2_000,
        retry: { attempts: 3, backoff: { baseDelayMs: 10 } },
      }),
    ],
  });
  const md = new grpc.Metadata();
  md.set('x-call-id', 'grpc-js');
  const reply = await new Promise<SayReply | undefined>((resolve, reject) =>
    client.Say({ message: 'hi' }, md, (e, r) => (e ? reject(e) : resolve(r))),
  );
  client.close();
  assert.equal(reply?.message, 'hi');
  assert.equal(
    attempts.get('grpc-js'),
    2,
    'grpc-js: the server saw the failed attempt and the retry',
  );
}

// The shape of nice-grpc's MethodDefinition (not exported by nice-grpc 2.0.0),
// as ts-proto would generate it; proto-loader's definition is untyped.
interface SayDefinition {
  path: string;
  requestStream: false;
  responseStream: false;
  requestSerialize(value: { message: string }): Uint8Array;
  requestDeserialize(bytes: Uint8Array): { message: string };
  responseSerialize(value: SayReply): Uint8Array;
  responseDeserialize(bytes: Uint8Array): SayReply;
  options: { idempotencyLevel?: 'IDEMPOTENT' | 'NO_SIDE_EFFECTS' };
}
const niceDefinition = definition['check.Echo'] as unknown as { Say: SayDefinition };

async function checkNiceGrpc(address: string): Promise<void> {
  const channel = createChannel(address);
  const client = createClientFactory()
    .use(
      resilienceMiddleware({
        idempotent: idempotentMethods(definition),
        timeoutMs: 2_000,
        retry: { backoff: { baseDelayMs: 10 } },
      }),
    )
    .create(niceDefinition, channel);
  try {
    const reply = await client.Say(
      { message: 'nice' },
      { metadata: Metadata({ 'x-call-id': 'nice-grpc' }) },
    );
    assert.equal(reply.message, 'nice');
  } finally {
    channel.close();
  }
  assert.equal(
    attempts.get('nice-grpc'),
    2,
    'nice-grpc: the server saw the failed attempt and the retry',
  );
}

const t = initTRPC.create();
const appRouter = t.router({
  echo: t.procedure
    .input((value: unknown) => String(value))
    .query(({ input }) => ({ value: input })),
});

async function checkTrpc(): Promise<void> {
  const handler = createHTTPHandler({ router: appRouter });
  const server = createServer((req, res) => {
    const n = attempt(String(req.headers['x-call-id']));
    if (n === 1) {
      res.statusCode = 503;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          error: {
            message: 'first attempt fails',
            code: -32603,
            data: { code: 'SERVICE_UNAVAILABLE', httpStatus: 503 },
          },
        }),
      );
      return;
    }
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = createTRPCClient<typeof appRouter>({
    links: [
      resilienceLink({
        retry: { attempts: 3, backoff: { baseDelayMs: 10 } },
        circuit: { failureThreshold: 5, openDurationMs: 10_000 },
        attemptTimeoutMs: 2_000,
      }),
      httpLink({ url, headers: () => ({ 'x-call-id': 'trpc' }) }),
    ],
  });
  const answer = await client.echo.query('hello');
  server.close();
  assert.deepEqual(answer, { value: 'hello' });
  assert.equal(attempts.get('trpc'), 2, 'trpc: the server saw the failed attempt and the retry');
}

async function main(): Promise<void> {
  const { server, address } = await startGrpcServer();
  try {
    await checkGrpcJs(address);
    await checkNiceGrpc(address);
    const signal = new AbortController().signal;
    assert.deepEqual(await runProbe(grpcHealthProbe, address, { provider: 'a', signal }), {
      healthy: true,
      reason: 'SERVING',
    });
    grpcHealthProbe.close();
    assert.equal((await runProbe(tcpProbe, address, { provider: 'a', signal })).healthy, true);
    await checkTrpc();
  } finally {
    server.forceShutdown();
  }
  console.log('ok: grpc-js, nice-grpc, trpc, health probes');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
