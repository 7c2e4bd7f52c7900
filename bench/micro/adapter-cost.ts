/**
 * Per-call CPU cost of each adapter's full stack against its bare client,
 * with the network replaced by a stub at the framework's lowest layer:
 *
 * - grpc-js and nice-grpc: a real client (nice-grpc over grpc-js) on a stub
 *   `Channel` whose calls answer the request bytes back on the next macrotask
 *   (Echo's request and response share field 1), so grpc-js's own interceptor
 *   chain, serialization and listeners all run, and no HTTP/2 does;
 * - tRPC: a real `httpBatchLink` whose `fetch` is a stub answering the batch.
 *
 * Variants of one adapter run in interleaved rounds (order rotated each round,
 * garbage collected before each run); each run reports process CPU µs per
 * call. We print the median per variant and the median of the per-round paired
 * differences, stack − bare, and the CPU-bound throughput ratio bare/stack.
 * CPU time is what a loaded machine does not inflate (wall time it does).
 *
 * Run: cd bench && node --expose-gc --import tsx micro/adapter-cost.ts
 *      [--rounds 15] [--calls 3000] [--only grpc-js,nice-grpc,trpc] [--concurrency 1,64]
 *      [--variant stack]  (that variant only, no report: for --cpu-prof)
 *      [--isolated]       (each variant in its own process: in one process the
 *                          variants share a JIT and the stack measures dearer)
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  type Channel,
  type ChannelInterface,
  type InterceptingListener,
  Metadata,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { createTRPCClient, httpBatchLink, type TRPCLink } from '@trpc/client';
import { createClient, createClientFactory } from 'nice-grpc';
import {
  type ChaosTrpcRouter,
  createEchoClient,
  ECHO_SERVICE,
  type EchoClient,
  loadEchoPackageDefinition,
} from '../../packages/chaos/src/index.js';
import { createRetryBudget } from '../../packages/core/src/index.js';
import {
  disableGrpcRetries,
  idempotentMethods,
  resilienceInterceptor,
} from '../../packages/grpc-js/src/index.js';
import { resilienceMiddleware } from '../../packages/nice-grpc/src/index.js';
import { resilienceLink } from '../../packages/trpc/src/index.js';
import { spawnCommandChild } from '../harness/children.js';
import { serveCommands } from '../harness/command-loop.js';
import { median, runInterleaved } from '../harness/stats.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '15' },
    calls: { type: 'string', default: '3000' },
    only: { type: 'string', default: 'grpc-js,nice-grpc,trpc' },
    concurrency: { type: 'string', default: '1,64' },
    // Run only one variant (e.g. `stack`) for a --cpu-prof profile, no report.
    variant: { type: 'string' },
    // Each variant in its own process (rounds still interleaved): no shared JIT.
    isolated: { type: 'boolean', default: false },
    // Internal: serve one adapter's variant to an --isolated parent (`adapter:variant`).
    serve: { type: 'string' },
  },
});
const ROUNDS = Number(values.rounds);
const CALLS = Number(values.calls);
const gc = (globalThis as { gc?: () => void }).gc;

// ---------------------------------------------------------------- stub channel

const OK_METADATA = new Metadata();

/** One call on the stub channel: answers its request bytes back with OK. */
class StubCall {
  private listener: InterceptingListener | undefined;
  private message: Buffer | undefined;
  private done = false;
  start(_metadata: Metadata, listener: InterceptingListener): void {
    this.listener = listener;
  }
  sendMessageWithContext(_context: object, message: Buffer): void {
    this.message = message;
  }
  halfClose(): void {
    setImmediate(() => this.answer());
  }
  private answer(): void {
    if (this.done) return;
    this.done = true;
    const listener = this.listener as InterceptingListener;
    listener.onReceiveMetadata(OK_METADATA);
    listener.onReceiveMessage(this.message);
    listener.onReceiveStatus({ code: status.OK, details: 'OK', metadata: OK_METADATA });
  }
  startRead(): void {}
  cancelWithStatus(code: status, details: string): void {
    if (this.done) return;
    this.done = true;
    setImmediate(() => this.listener?.onReceiveStatus({ code, details, metadata: new Metadata() }));
  }
  getPeer(): string {
    return 'stub';
  }
  getCallNumber(): number {
    return 0;
  }
  setCredentials(): void {}
  getAuthContext(): null {
    return null;
  }
}

/** A grpc-js channel whose calls never touch the network. */
const stubChannel = {
  close() {},
  getTarget: () => 'stub',
  getConnectivityState: () => 2, // READY
  watchConnectivityState() {},
  createCall: () => new StubCall(),
} as unknown as ChannelInterface & Channel;

// ---------------------------------------------------------------- variants

type Call = () => Promise<unknown>;
interface Variant {
  name: string;
  call: Call;
}

function grpcCall(client: EchoClient): Call {
  const request = { message: 'bench' };
  return () =>
    new Promise((resolve, reject) => {
      client.Unary(request, (error: ServiceError | null, value?: unknown) =>
        error ? reject(error) : resolve(value),
      );
    });
}

function grpcVariants(): Variant[] {
  const idempotent = idempotentMethods(loadEchoPackageDefinition());
  // The adapters suite's full stack: every part on, none ever refusing.
  const stack = resilienceInterceptor({
    idempotent,
    deadline: { timeout: '10s' },
    circuitBreaker: { breaker: { failureThreshold: 5, openDurationMs: 1000 } },
    rateLimit: { capacity: 1e9, refillPerSecond: 1e9 },
    bulkhead: { concurrency: 10_000 },
    retry: { attempts: 3, budget: createRetryBudget({}) },
  });
  const bare = createEchoClient('stub', { channelOverride: stubChannel, ...disableGrpcRetries });
  const ours = createEchoClient('stub', {
    channelOverride: stubChannel,
    ...disableGrpcRetries,
    interceptors: [stack],
  });
  return [
    { name: 'bare', call: grpcCall(bare) },
    { name: 'stack', call: grpcCall(ours) },
  ];
}

function niceVariants(): Variant[] {
  type Unary = (request: { message: string }) => Promise<unknown>;
  const loaded = loadEchoPackageDefinition()[ECHO_SERVICE] as unknown as Record<string, unknown>;
  const definition = { Unary: loaded.Unary } as Parameters<typeof createClient>[0];
  const bare = createClient(definition, stubChannel) as unknown as { Unary: Unary };
  const ours = createClientFactory()
    .use(
      resilienceMiddleware({
        idempotent: 'all',
        deadline: { timeout: '10s' },
        circuitBreaker: { breaker: { failureThreshold: 5, openDurationMs: 1000 } },
        rateLimit: { capacity: 1e9, refillPerSecond: 1e9 },
        bulkhead: { concurrency: 10_000 },
        retry: { retryAttempts: 3, budget: createRetryBudget({}) },
      }),
    )
    .create(definition, stubChannel) as unknown as { Unary: Unary };
  const request = { message: 'bench' };
  return [
    { name: 'bare', call: () => bare.Unary(request) },
    { name: 'stack', call: () => ours.Unary(request) },
  ];
}

/** A `fetch` answering every query of a batch GET with its input, without a socket. */
const stubFetch = (async (url: string) => {
  const input = new URL(url).searchParams.get('input') ?? '{}';
  const items = Object.values(JSON.parse(input) as Record<string, unknown>);
  const body = items.map((data) => ({ result: { data } }));
  return {
    ok: true,
    status: 200,
    statusText: 'OK',
    headers: new Headers({ 'content-type': 'application/json' }),
    json: async () => body,
  };
}) as unknown as NonNullable<Parameters<typeof httpBatchLink>[0]['fetch']>;

function trpcVariants(): Variant[] {
  const terminal = () =>
    httpBatchLink<ChaosTrpcRouter>({ url: 'http://stub.invalid/trpc', fetch: stubFetch });
  const make = (links: TRPCLink<ChaosTrpcRouter>[]) => {
    const client = createTRPCClient<ChaosTrpcRouter>({ links });
    return () => client.echo.query('x');
  };
  return [
    { name: 'bare', call: make([terminal()]) },
    {
      name: 'stack',
      call: make([
        resilienceLink<ChaosTrpcRouter>({
          bulkhead: { pool: { concurrency: 10_000 } },
          rateLimit: { bucket: { capacity: 1e9, refillPerSecond: 1e9 } },
          timeout: { timeoutMs: '10s' },
          retry: { attempts: 3, budget: createRetryBudget({}) },
          circuit: { circuit: { failureThreshold: 5, openDurationMs: 1000 } },
        }),
        terminal(),
      ]),
    },
  ];
}

// ---------------------------------------------------------------- measurement

/** `calls` calls, `concurrency` in flight; returns CPU and wall µs per call. */
async function run(call: Call, concurrency: number, calls: number) {
  let left = calls;
  gc?.();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await call();
    }),
  );
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  return { cpuUs: (cpu.user + cpu.system) / calls, wallUs: (wall * 1000) / calls };
}

const adapters: Record<string, () => Variant[]> = {
  'grpc-js': grpcVariants,
  'nice-grpc': niceVariants,
  trpc: trpcVariants,
};

if (values.serve !== undefined) {
  // A child of --isolated: stdout is its command channel, so no header line.
  const [adapter, name] = values.serve.split(':') as [string, string];
  const variant = (adapters[adapter] as () => Variant[])().find((v) => v.name === name) as Variant;
  serveCommands(
    { ready: true },
    (c: { id: number; concurrency: number; calls: number }) =>
      run(variant.call, c.concurrency, c.calls),
    () => process.exit(0),
  );
} else {
  console.log(
    `per-call cost, stub transport, ${ROUNDS} interleaved rounds of ${CALLS} calls${values.isolated ? ', one process per variant' : ''}; load ${readFileSync('/proc/loadavg', 'utf8').trim()}`,
  );
  await (values.isolated ? isolated() : together());
}

/** Every variant in its own process, one at a time, the order rotating every round. */
async function isolated(): Promise<void> {
  for (const adapter of values.only.split(',')) {
    const names = (adapters[adapter] as () => Variant[])().map((v) => v.name);
    const children = await Promise.all(
      names.map((name) =>
        spawnCommandChild(
          '../micro/adapter-cost.ts',
          ['--serve', `${adapter}:${name}`],
          ['--expose-gc'],
        ),
      ),
    );
    try {
      for (const concurrency of values.concurrency.split(',').map(Number)) {
        const measured = await runInterleaved(
          Object.fromEntries(
            names.map((name, i) => [
              name,
              async () => {
                const r = (await children[i]?.command('run', { concurrency, calls: CALLS })) as {
                  cpuUs: number;
                };
                return r.cpuUs;
              },
            ]),
          ),
          ROUNDS + 1,
        );
        // The first round is the warm-up (JIT, lazy state).
        report(adapter, concurrency, {
          bare: (measured.bare as number[]).slice(1),
          stack: (measured.stack as number[]).slice(1),
        });
      }
    } finally {
      await Promise.all(children.map((c) => c.close()));
    }
  }
}

function report(
  adapter: string,
  concurrency: number,
  cpu: Record<string, number[]>,
  wall?: Record<string, number[]>,
): void {
  const bare = cpu.bare as number[];
  const stack = cpu.stack as number[];
  const diffs = stack.map((s, i) => s - (bare[i] as number));
  const ratios = stack.map((s, i) => (bare[i] as number) / s);
  console.log(
    [
      `${adapter.padEnd(9)} c=${String(concurrency).padEnd(3)}`,
      `CPU/call bare ${median(bare).toFixed(1).padStart(6)} µs`,
      `stack ${median(stack).toFixed(1).padStart(6)} µs`,
      `paired Δ ${median(diffs).toFixed(1).padStart(5)} µs`,
      `bare/stack ${(median(ratios) * 100).toFixed(1)}%`,
      ...(wall
        ? [
            `(wall ${median(wall.bare as number[]).toFixed(1)} / ${median(wall.stack as number[]).toFixed(1)} µs)`,
          ]
        : []),
    ].join('  '),
  );
}

/** Every variant in this process, in interleaved rounds. */
async function together(): Promise<void> {
  for (const adapter of values.only.split(',')) {
    const variants = (adapters[adapter] as () => Variant[])();
    if (values.variant !== undefined) {
      const v = variants.find((x) => x.name === values.variant) as Variant;
      for (const concurrency of values.concurrency.split(',').map(Number)) {
        for (let r = 0; r < ROUNDS; r++) await run(v.call, concurrency, CALLS);
      }
      continue;
    }
    for (const concurrency of values.concurrency.split(',').map(Number)) {
      for (const v of variants) await run(v.call, concurrency, CALLS); // warm-up: JIT, lazy state
      const cpu: Record<string, number[]> = {};
      const wall: Record<string, number[]> = {};
      for (let r = 0; r < ROUNDS; r++) {
        for (let k = 0; k < variants.length; k++) {
          const v = variants[(r + k) % variants.length] as Variant;
          const result = await run(v.call, concurrency, CALLS);
          cpu[v.name] = [...(cpu[v.name] ?? []), result.cpuUs];
          wall[v.name] = [...(wall[v.name] ?? []), result.wallUs];
        }
      }
      report(adapter, concurrency, cpu, wall);
    }
  }
}
