// Every public factory of every package rejects unknown option keys and bad
// numbers at construction, naming the full option path (issue 16, defect 13).
import * as core from '@breakwater/core';
import * as coreBreaker from '@breakwater/core/breaker';
import * as coreHealth from '@breakwater/core/health';
import * as coreNode from '@breakwater/core/node';
import * as coreTime from '@breakwater/core/time';
import * as grpcJs from '@breakwater/grpc-js';
import * as grpcJsHealth from '@breakwater/grpc-js/health';
import * as niceGrpc from '@breakwater/nice-grpc';
import * as otel from '@breakwater/otel';
import * as trpc from '@breakwater/trpc';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

type Options = Record<string, unknown>;

/** One numeric or duration option and which of the fuzzed values it legitimately accepts. */
interface NumberOption {
  path: string;
  /** `Infinity` is a valid value (e.g. `concurrency`). */
  infinity?: boolean;
  /** Negative numbers are valid (e.g. an absolute time or a readiness limit). */
  negative?: boolean;
}

interface Row {
  pkg: 'core' | 'grpc-js' | 'nice-grpc' | 'trpc' | 'otel';
  /** The exported factory's name. */
  name: string;
  call: (options: Options) => unknown;
  /** A fresh minimal valid options object. */
  valid: () => Options;
  /** Paths of the nested option objects inside `valid()`. */
  nested: string[];
  numbers: NumberOption[];
  /** Releases what a (wrongly) successful call built. */
  cleanup?: (built: unknown) => void;
}

const n = (path: string, extra: Omit<NumberOption, 'path'> = {}): NumberOption => ({
  path,
  ...extra,
});
const stop = (built: unknown) => (built as { stop(): void }).stop();
const close = (built: unknown) => (built as { close(): void }).close();
const sample = () => 1;
const unusedLink = (() => () => {
  throw new Error('not called at construction');
}) as never;

const coreRows: Row[] = [
  {
    pkg: 'core',
    name: 'protect',
    call: (o) => core.protect(o),
    valid: () => ({
      timeoutMs: 5000,
      attemptTimeoutMs: 1000,
      retry: {
        attempts: 2,
        backoff: { baseDelayMs: 10, strategy: 'exponential', maxDelayMs: 1000 },
        maxPushbackMs: 1000,
      },
      budget: { ratio: 0.2, minRetriesPerSecond: 1, ttlMs: 1000 },
      circuit: { failureThreshold: 2, openDurationMs: 1000 },
      concurrency: { limit: 2, maxQueue: 1 },
      rateLimit: { capacity: 10, refillPerSecond: 10 },
    }),
    nested: ['retry', 'retry.backoff', 'budget', 'circuit', 'concurrency', 'rateLimit'],
    numbers: [
      n('timeoutMs', { infinity: true }),
      n('attemptTimeoutMs', { infinity: true }),
      n('retry.attempts'),
      n('retry.backoff.baseDelayMs'),
      n('retry.backoff.maxDelayMs', { infinity: true }),
      n('retry.maxPushbackMs'),
      n('budget.ratio'),
      n('circuit.failureThreshold', { infinity: true }),
      n('circuit.openDurationMs'),
      n('concurrency.limit'),
      n('concurrency.maxQueue', { infinity: true }),
      n('rateLimit.capacity'),
    ],
  },
  {
    pkg: 'core',
    name: 'withRetry',
    call: (o) => {
      const p = core.withRetry(() => 1, o);
      p.catch(() => {});
      return p;
    },
    valid: () => ({ attempts: 2, timeoutMs: 1000 }),
    nested: [],
    numbers: [n('attempts'), n('timeoutMs')],
  },
  {
    pkg: 'core',
    name: 'withTimeout',
    call: (o) => {
      const p = core.withTimeout(() => 1, o);
      p.catch(() => {});
      return p;
    },
    valid: () => ({ timeoutMs: 1000 }),
    nested: [],
    numbers: [n('timeoutMs', { infinity: true })],
  },
  {
    pkg: 'core',
    name: 'createDeadline',
    call: (o) => core.createDeadline(o),
    valid: () => ({ timeoutMs: 1000 }),
    nested: [],
    numbers: [n('timeoutMs', { infinity: true })],
  },
  {
    pkg: 'core',
    name: 'createCircuitBreaker',
    call: (o) => core.createCircuitBreaker(o),
    valid: () => ({
      failureThreshold: 3,
      openDurationMs: 1000,
      backoffMultiplier: 2,
      halfOpenMaxCalls: 2,
      successThreshold: 1,
      window: { type: 'count', size: 10, minimumCalls: 5, failureRateThreshold: 0.5 },
      slowCall: { durationMs: 100, rateThreshold: 0.5 },
    }),
    nested: ['window', 'slowCall'],
    numbers: [
      n('failureThreshold', { infinity: true }),
      n('openDurationMs'),
      n('backoffMultiplier'),
      n('halfOpenMaxCalls', { infinity: true }),
      n('window.size'),
      n('window.failureRateThreshold'),
      n('slowCall.durationMs'),
      n('slowCall.rateThreshold'),
    ],
  },
  {
    pkg: 'core',
    name: 'createBackoff',
    call: (o) => core.createBackoff(o as never),
    valid: () => ({
      baseDelayMs: 10,
      strategy: 'exponential',
      factor: 2,
      maxDelayMs: 1000,
      jitter: 'additive',
      jitterRatio: 0.5,
    }),
    nested: [],
    numbers: [n('baseDelayMs'), n('factor'), n('maxDelayMs', { infinity: true }), n('jitterRatio')],
  },
  {
    pkg: 'core',
    name: 'createRetryBudget',
    call: (o) => core.createRetryBudget(o),
    valid: () => ({ ratio: 0.2, minRetriesPerSecond: 10, ttlMs: 1000 }),
    nested: [],
    numbers: [n('ratio'), n('minRetriesPerSecond'), n('ttlMs')],
  },
  {
    pkg: 'core',
    name: 'createAdaptiveThrottle',
    call: (o) => core.createAdaptiveThrottle(o),
    valid: () => ({ k: 2, windowMs: 1000, buckets: 4 }),
    nested: [],
    numbers: [n('k'), n('windowMs'), n('buckets')],
  },
  {
    pkg: 'core',
    name: 'createAdaptiveLimiter',
    call: (o) => core.createAdaptiveLimiter(o),
    valid: () => ({
      initialLimit: 10,
      minLimit: 2,
      maxLimit: 100,
      rttTolerance: 1.5,
      smoothing: 0.5,
      backoffRatio: 0.9,
      probeIntervalMs: 1000,
      probeSamples: 5,
      shares: { default: 0.9, sheddable: 0.5 },
    }),
    nested: ['shares'],
    numbers: [
      n('initialLimit'),
      n('minLimit'),
      n('maxLimit'),
      n('rttTolerance'),
      n('smoothing'),
      n('backoffRatio'),
      n('probeIntervalMs', { infinity: true }),
      n('probeSamples'),
      n('shares.default'),
      n('shares.sheddable'),
    ],
  },
  {
    pkg: 'core',
    name: 'createTokenBucket',
    call: (o) => core.createTokenBucket(o as never),
    valid: () => ({ capacity: 10, refillPerSecond: 5 }),
    nested: [],
    numbers: [n('capacity'), n('refillPerSecond')],
  },
  {
    pkg: 'core',
    name: 'createKeyedLimiter',
    call: (o) => core.createKeyedLimiter(o as never),
    valid: () => ({ capacity: 10, refillPerSecond: 5, maxKeys: 100 }),
    nested: [],
    numbers: [n('capacity'), n('refillPerSecond'), n('maxKeys')],
  },
  {
    pkg: 'core',
    name: 'createPool',
    call: (o) => core.createPool(o as never),
    valid: () => ({ concurrency: 2, maxQueue: 1 }),
    nested: [],
    numbers: [n('concurrency', { infinity: true }), n('maxQueue', { infinity: true })],
  },
  {
    pkg: 'core',
    name: 'createCache',
    call: (o) => core.createCache(o as never),
    valid: () => ({ maxSize: 10, ttlMs: 1000, staleWhileRevalidateMs: 100 }),
    nested: [],
    numbers: [
      n('maxSize'),
      n('ttlMs', { infinity: true }),
      n('staleWhileRevalidateMs', { infinity: true }),
    ],
  },
  {
    pkg: 'core',
    name: 'createHealthRegistry',
    call: (o) => core.createHealthRegistry(o),
    valid: () => ({ failureThreshold: 3, openDurationMs: 1000 }),
    nested: [],
    numbers: [n('failureThreshold'), n('openDurationMs')],
  },
  {
    pkg: 'core',
    name: 'createHealthChecker',
    call: (o) => core.createHealthChecker(o as never),
    valid: () => ({
      registry: core.createHealthRegistry(),
      targets: [{ name: 'a', target: 'x' }],
      probe: 'none',
      intervalMs: 1000,
      timeoutMs: 500,
    }),
    nested: ['targets[0]'],
    numbers: [n('intervalMs'), n('timeoutMs')],
    cleanup: stop,
  },
  {
    pkg: 'core',
    name: 'createHttpProbe',
    call: (o) => coreNode.createHttpProbe(o),
    valid: () => ({ timeoutMs: 1000, method: 'HEAD', maxRedirects: 2, maxEventBytes: 1024 }),
    nested: [],
    numbers: [n('timeoutMs'), n('maxRedirects'), n('maxEventBytes')],
  },
  {
    pkg: 'core',
    name: 'createTcpProbe',
    call: (o) => coreNode.createTcpProbe(o),
    valid: () => ({ timeoutMs: 500 }),
    nested: [],
    numbers: [n('timeoutMs')],
  },
  {
    pkg: 'core',
    name: 'createTransientErrorPredicate',
    call: (o) => core.createTransientErrorPredicate(o),
    valid: () => ({ retryUnknown: false, retryableCodes: ['EAI_AGAIN'] }),
    nested: [],
    numbers: [],
  },
  {
    pkg: 'core',
    name: 'createRouter',
    call: (o) => core.createRouter(o as never),
    valid: () => ({
      providers: [{ id: 'a', resource: 1, protection: { retry: { attempts: 2 } } }],
      protection: {
        timeoutMs: 5000,
        attemptTimeoutMs: 1000,
        retry: { attempts: 2, backoff: { baseDelayMs: 10 } },
        circuit: { failureThreshold: 2, openDurationMs: 1000 },
      },
      selection: { type: 'priority', priorities: { a: 1 } },
      hedge: { delayMs: 10, attempts: 2 },
      health: { failureThreshold: 3, openDurationMs: 1000 },
      concurrency: { limit: 2, maxQueue: 1 },
      budget: { ratio: 0.2 },
    }),
    nested: [
      'providers[0]',
      'providers[0].protection',
      'providers[0].protection.retry',
      'protection',
      'protection.retry',
      'protection.retry.backoff',
      'protection.circuit',
      'selection',
      'hedge',
      'health',
      'concurrency',
      'budget',
    ],
    numbers: [
      n('concurrency.limit'),
      n('concurrency.maxQueue', { infinity: true }),
      n('protection.timeoutMs', { infinity: true }),
      n('protection.attemptTimeoutMs', { infinity: true }),
      n('protection.retry.attempts'),
      n('protection.retry.backoff.baseDelayMs'),
      n('protection.circuit.failureThreshold', { infinity: true }),
      n('providers[0].protection.retry.attempts'),
      n('hedge.delayMs'),
      n('hedge.attempts'),
      n('health.failureThreshold'),
      n('health.openDurationMs'),
      n('budget.ratio'),
    ],
    cleanup: stop,
  },
  {
    pkg: 'core',
    name: 'counterProgress',
    call: (o) => coreHealth.counterProgress(o as never),
    valid: () => ({ sample, intervalMs: 10, initial: 0 }),
    nested: [],
    numbers: [n('intervalMs')],
  },
  {
    pkg: 'core',
    name: 'sampleUnchanged',
    call: (o) => coreHealth.sampleUnchanged(o as never),
    valid: () => ({ sample, intervalMs: 10 }),
    nested: [],
    numbers: [n('intervalMs')],
  },
  {
    pkg: 'core',
    name: 'belowLimit',
    call: (o) => coreHealth.belowLimit(o as never),
    valid: () => ({ sample, limit: 5 }),
    nested: [],
    numbers: [n('limit', { infinity: true, negative: true })],
  },
  {
    pkg: 'core',
    name: 'ratioBelow',
    call: (o) => coreHealth.ratioBelow(o as never),
    valid: () => ({ numerator: sample, denominator: sample, limit: 0.5 }),
    nested: [],
    numbers: [n('limit', { infinity: true, negative: true })],
  },
  {
    pkg: 'core',
    name: 'startupGrace',
    call: (o) => coreHealth.startupGrace(o as never),
    valid: () => ({ graceMs: 1000, startedAt: 0 }),
    nested: [],
    numbers: [n('graceMs'), n('startedAt', { negative: true })],
  },
];

const grpcRows: Row[] = [
  {
    pkg: 'grpc-js',
    name: 'createGrpcStatusClassifier',
    call: (o) => grpcJs.createGrpcStatusClassifier(o),
    valid: () => ({ retryAborted: false, methods: { 'pkg.S': { retryInternal: true } } }),
    nested: ['methods["pkg.S"]'],
    numbers: [],
  },
  {
    pkg: 'grpc-js',
    name: 'createGrpcHealthProbe',
    call: (o) => grpcJsHealth.createGrpcHealthProbe(o),
    valid: () => ({ service: '' }),
    nested: [],
    numbers: [],
    cleanup: close,
  },
  {
    pkg: 'grpc-js',
    name: 'resilienceInterceptor',
    call: (o) => grpcJs.resilienceInterceptor(o),
    valid: () => ({
      timeoutMs: 1000,
      attemptTimeoutMs: 500,
      circuit: { failureThreshold: 3 },
      rateLimit: { capacity: 10, refillPerSecond: 5 },
      concurrency: { limit: 2 },
      budget: { ratio: 0.1 },
      retry: { attempts: 3, backoff: { baseDelayMs: 10 } },
      hedge: { delayMs: 10 },
      idempotent: 'all',
    }),
    nested: ['circuit', 'rateLimit', 'concurrency', 'budget', 'retry', 'retry.backoff', 'hedge'],
    numbers: [
      n('timeoutMs', { infinity: true }),
      n('attemptTimeoutMs', { infinity: true }),
      n('circuit.failureThreshold', { infinity: true }),
      n('rateLimit.capacity'),
      n('concurrency.limit'),
      n('budget.ratio'),
      n('retry.attempts'),
      n('retry.backoff.baseDelayMs'),
      n('hedge.delayMs'),
    ],
  },
  {
    pkg: 'grpc-js',
    name: 'createRoutingChannel',
    call: (o) => grpcJs.createRoutingChannel(o as never),
    valid: () => ({
      targets: [{ id: 'a', address: '127.0.0.1:1', protection: { retry: { attempts: 2 } } }],
      protection: { retry: { attempts: 2, backoff: { baseDelayMs: 10 } } },
      attemptTimeoutMs: 1000,
      hedge: { delayMs: 10 },
      circuit: { failureThreshold: 3, openDurationMs: 1000 },
      health: { intervalMs: 5000 },
      selection: 'priority',
    }),
    nested: [
      'targets[0]',
      'targets[0].protection',
      'targets[0].protection.retry',
      'protection',
      'protection.retry',
      'protection.retry.backoff',
      'hedge',
      'circuit',
      'health',
    ],
    numbers: [
      n('attemptTimeoutMs'),
      n('protection.retry.attempts'),
      n('targets[0].protection.retry.attempts'),
      n('protection.retry.backoff.baseDelayMs'),
      n('hedge.delayMs'),
      n('circuit.failureThreshold', { infinity: true }),
      n('circuit.openDurationMs'),
    ],
    cleanup: close,
  },
];

const niceRows: Row[] = [
  {
    pkg: 'nice-grpc',
    name: 'bulkheadMiddleware',
    call: (o) => niceGrpc.bulkheadMiddleware(o as never),
    valid: () => ({ limit: 2, maxQueue: 1 }),
    nested: [],
    numbers: [n('limit'), n('maxQueue', { infinity: true })],
  },
  {
    pkg: 'nice-grpc',
    name: 'rateLimitMiddleware',
    call: (o) => niceGrpc.rateLimitMiddleware(o as never),
    valid: () => ({ capacity: 10, refillPerSecond: 5 }),
    nested: [],
    numbers: [n('capacity'), n('refillPerSecond')],
  },
  {
    pkg: 'nice-grpc',
    name: 'deadlineMiddleware',
    call: (o) => niceGrpc.deadlineMiddleware(o),
    valid: () => ({ timeoutMs: 1000 }),
    nested: [],
    numbers: [n('timeoutMs', { infinity: true })],
  },
  {
    pkg: 'nice-grpc',
    name: 'hedgingMiddleware',
    call: (o) => niceGrpc.hedgingMiddleware(o as never),
    valid: () => ({ delayMs: 10, attempts: 2 }),
    nested: [],
    numbers: [n('delayMs'), n('attempts')],
  },
  {
    pkg: 'nice-grpc',
    name: 'retryMiddleware',
    call: (o) => niceGrpc.retryMiddleware(o),
    valid: () => ({ attempts: 3, backoff: { baseDelayMs: 10 }, attemptTimeoutMs: 1000 }),
    nested: ['backoff'],
    numbers: [n('attempts'), n('backoff.baseDelayMs'), n('attemptTimeoutMs', { infinity: true })],
  },
  {
    pkg: 'nice-grpc',
    name: 'circuitBreakerMiddleware',
    call: (o) => niceGrpc.circuitBreakerMiddleware(o),
    valid: () => ({ failureThreshold: 3 }),
    nested: [],
    numbers: [n('failureThreshold', { infinity: true })],
  },
  {
    pkg: 'nice-grpc',
    name: 'resilienceMiddleware',
    call: (o) => niceGrpc.resilienceMiddleware(o),
    valid: () => ({
      timeoutMs: 1000,
      circuit: { failureThreshold: 3 },
      rateLimit: { capacity: 10, refillPerSecond: 5 },
      concurrency: { limit: 2 },
      retry: { attempts: 3, backoff: { baseDelayMs: 10 } },
      hedge: { delayMs: 10 },
    }),
    nested: ['circuit', 'rateLimit', 'concurrency', 'retry', 'retry.backoff', 'hedge'],
    numbers: [
      n('timeoutMs', { infinity: true }),
      n('circuit.failureThreshold', { infinity: true }),
      n('rateLimit.capacity'),
      n('concurrency.limit'),
      n('retry.attempts'),
      n('retry.backoff.baseDelayMs'),
      n('hedge.delayMs'),
    ],
  },
];

const trpcRows: Row[] = [
  {
    pkg: 'trpc',
    name: 'bulkheadLink',
    call: (o) => trpc.bulkheadLink(o as never),
    valid: () => ({ limit: 2, maxQueue: 1 }),
    nested: [],
    numbers: [n('limit'), n('maxQueue', { infinity: true })],
  },
  {
    pkg: 'trpc',
    name: 'rateLimitLink',
    call: (o) => trpc.rateLimitLink(o as never),
    valid: () => ({ capacity: 10, refillPerSecond: 5 }),
    nested: [],
    numbers: [n('capacity'), n('refillPerSecond')],
  },
  {
    pkg: 'trpc',
    name: 'deadlineLink',
    call: (o) => trpc.deadlineLink(o as never),
    valid: () => ({ timeoutMs: 1000 }),
    nested: [],
    numbers: [n('timeoutMs', { infinity: true })],
  },
  {
    pkg: 'trpc',
    name: 'hedgeLink',
    call: (o) => trpc.hedgeLink(o as never),
    valid: () => ({ delayMs: 10, attempts: 2, budget: { ratio: 0.1 } }),
    nested: ['budget'],
    numbers: [n('delayMs'), n('attempts'), n('budget.ratio')],
  },
  {
    pkg: 'trpc',
    name: 'retryLink',
    call: (o) => trpc.retryLink(o),
    valid: () => ({ attempts: 3, backoff: { baseDelayMs: 10 }, maxPushbackMs: 1000 }),
    nested: ['backoff'],
    numbers: [n('attempts'), n('backoff.baseDelayMs'), n('maxPushbackMs', { infinity: true })],
  },
  {
    pkg: 'trpc',
    name: 'circuitBreakerLink',
    call: (o) => trpc.circuitBreakerLink(o as never),
    valid: () => ({ failureThreshold: 3, openDurationMs: 1000 }),
    nested: [],
    numbers: [n('failureThreshold', { infinity: true }), n('openDurationMs')],
  },
  {
    pkg: 'trpc',
    name: 'createTRPCErrorClassifier',
    call: (o) => trpc.createTRPCErrorClassifier(o as never),
    valid: () => ({ retryableCodes: ['TIMEOUT'] }),
    nested: [],
    numbers: [],
  },
  {
    pkg: 'trpc',
    name: 'resilienceLink',
    call: (o) => trpc.resilienceLink(o),
    valid: () => ({
      concurrency: { limit: 2 },
      rateLimit: { capacity: 10, refillPerSecond: 5 },
      timeoutMs: 1000,
      retry: { attempts: 3, backoff: { baseDelayMs: 10 } },
      hedge: { delayMs: 10 },
      circuit: { failureThreshold: 3 },
      attemptTimeoutMs: 500,
      idempotent: true,
    }),
    nested: ['concurrency', 'rateLimit', 'retry', 'retry.backoff', 'hedge', 'circuit'],
    numbers: [
      n('concurrency.limit'),
      n('rateLimit.capacity'),
      n('timeoutMs', { infinity: true }),
      n('retry.attempts'),
      n('retry.backoff.baseDelayMs'),
      n('hedge.delayMs'),
      n('circuit.failureThreshold', { infinity: true }),
      n('attemptTimeoutMs', { infinity: true }),
    ],
  },
  {
    pkg: 'trpc',
    name: 'routingLink',
    call: (o) => trpc.routingLink(o as never),
    valid: () => ({
      endpoints: [{ id: 'a', link: unusedLink }],
      protection: { retry: { attempts: 2 } },
      hedge: { delayMs: 10 },
      health: { failureThreshold: 3 },
      concurrency: { limit: 2 },
      idempotent: true,
    }),
    nested: ['endpoints[0]', 'protection', 'protection.retry', 'hedge', 'health', 'concurrency'],
    numbers: [
      n('concurrency.limit'),
      n('protection.retry.attempts'),
      n('hedge.delayMs'),
      n('health.failureThreshold'),
    ],
  },
];

const otelRows: Row[] = [
  {
    pkg: 'otel',
    name: 'otelTelemetry',
    call: (o) => otel.otelTelemetry(o as never),
    valid: () => ({ spanEvents: true, attemptSpans: false }),
    nested: [],
    numbers: [],
  },
];

const rows: Row[] = [...coreRows, ...grpcRows, ...niceRows, ...trpcRows, ...otelRows];

/** `a.b[0]["c.d"]` → `['a', 'b', '0', 'c.d']`. */
function segments(path: string): string[] {
  return [...path.matchAll(/\["([^"]+)"\]|\[(\d+)\]|([^.[\]]+)/g)].map(
    (m) => (m[1] ?? m[2] ?? m[3]) as string,
  );
}

function objectAt(root: Options, path: string): Options {
  let at: unknown = root;
  for (const s of segments(path)) at = (at as Options)[s];
  return at as Options;
}

function setAt(root: Options, path: string, value: unknown): void {
  const parts = segments(path);
  const last = parts.pop() as string;
  const parent = parts.length === 0 ? root : objectAt(root, parts.join('.'));
  parent[last] = value;
}

const join = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The path as a whole word: not the tail of a longer path (`attempts` in `retry.attempts`). */
const names = (message: string, path: string) =>
  new RegExp(`(^|[ \`])${escapeRegExp(path)}([ \`]|$)`).test(message);

/** The error `row.call(options)` throws, or a failure naming what was built instead. */
function thrown(row: Row, options: Options): Error {
  let built: unknown;
  try {
    built = row.call(options);
  } catch (error) {
    return error as Error;
  }
  row.cleanup?.(built);
  throw new Error(`${row.name} accepted ${JSON.stringify(options)}`);
}

/** A typo of `key`: one character dropped, doubled, swapped with the next, or re-cased. */
const typoOf = (key: string) =>
  fc
    .tuple(fc.constantFrom('drop', 'double', 'swap', 'case'), fc.nat({ max: key.length - 2 }))
    .map(([kind, i]) => {
      const c = key[i] as string;
      if (kind === 'drop') return key.slice(0, i) + key.slice(i + 1);
      if (kind === 'double') return key.slice(0, i) + c + key.slice(i);
      if (kind === 'swap') return key.slice(0, i) + key[i + 1] + c + key.slice(i + 2);
      const flipped = c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase();
      return key.slice(0, i) + flipped + key.slice(i + 1);
    })
    .filter((typo) => typo !== key);

const randomKey = fc.oneof(
  fc.stringMatching(/^[a-z][a-zA-Z0-9_$]{0,14}$/).map((s) => `zq${s}`),
  fc.constantFrom('toString', 'constructor', 'hasOwnProperty', 'valueOf', '__defineGetter__'),
);

const badValues: { value: unknown; infinite?: boolean; negative?: boolean }[] = [
  { value: Number.NaN },
  { value: -1, negative: true },
  { value: Number.POSITIVE_INFINITY, infinite: true },
  { value: Number.NEGATIVE_INFINITY, negative: true },
  { value: `${'9'.repeat(400)}ms` },
  { value: 'soon' },
  { value: {} },
  { value: [] },
];

describe.each(rows.map((r) => [`${r.pkg} ${r.name}`, r] as const))('%s', (_, row) => {
  it('accepts its minimal valid options', () => {
    row.cleanup?.(row.call(row.valid()));
  });

  it.each(['', ...row.nested])('rejects unknown keys at `%s`, naming the full path', (path) => {
    fc.assert(
      fc.property(randomKey, (key) => {
        const options = row.valid();
        const target = path === '' ? options : objectAt(options, path);
        if (Object.hasOwn(target, key)) return;
        Object.defineProperty(target, key, { value: 1, enumerable: true, writable: true });
        const error = thrown(row, options);
        expect(error).toBeInstanceOf(TypeError);
        expect(error.message).toContain(`unknown option \`${join(path, key)}\``);
        expect(error.message).toContain(row.name);
      }),
      { seed: 42, numRuns: 12 },
    );
  });

  it.each(['', ...row.nested])('suggests the key a near-miss typo at `%s` meant', (path) => {
    const target = path === '' ? row.valid() : objectAt(row.valid(), path);
    const real = Object.keys(target).filter((k) => k.length >= 4);
    if (real.length === 0) return;
    const typo = fc.constantFrom(...real).chain((k) => typoOf(k).map((t) => [k, t] as const));
    fc.assert(
      fc.property(typo, ([key, wrong]) => {
        const options = row.valid();
        const at = path === '' ? options : objectAt(options, path);
        if (Object.hasOwn(at, wrong)) return;
        at[wrong] = at[key];
        const error = thrown(row, options);
        expect(error).toBeInstanceOf(TypeError);
        expect(error.message).toContain(`unknown option \`${join(path, wrong)}\``);
        expect(error.message).toMatch(/did you mean `[^`]+`\?/);
        expect(error.message).toContain(row.name);
      }),
      { seed: 42, numRuns: 12 },
    );
  });

  if (row.numbers.length > 0) {
    it('rejects out-of-range and wrong-type numbers, naming the full path', () => {
      const cases = row.numbers.flatMap((option) =>
        badValues
          .filter((b) => !(b.infinite && option.infinity) && !(b.negative && option.negative))
          .map((b) => [option.path, b.value] as const),
      );
      fc.assert(
        fc.property(fc.constantFrom(...cases), ([path, value]) => {
          const options = row.valid();
          setAt(options, path, value);
          const error = thrown(row, options);
          expect([TypeError, RangeError]).toContain(error.constructor);
          expect(names(error.message, path), `${error.message} names ${path}`).toBe(true);
        }),
        { seed: 42, numRuns: Math.min(cases.length * 2, 120) },
      );
    });

    // One duration rule: durations are ms numbers; no option takes "2s" (VOCABULARY.md).
    it.each(row.numbers.map((o) => o.path))('refuses a duration string at `%s`', (path) => {
      const options = row.valid();
      setAt(options, path, '2s');
      const error = thrown(row, options);
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toContain(`${path} must be a number, got "2s"`);
    });
  }
});

/** Options 0.2 renamed to the vocabulary: [factory, where the object sits, old key, new key]. */
const RENAMED: readonly (readonly [string, string, string, string])[] = [
  ['withTimeout', '', 'timeout', 'timeoutMs'],
  ['createHttpProbe', '', 'timeout', 'timeoutMs'],
  ['createTcpProbe', '', 'timeout', 'timeoutMs'],
  ['counterProgress', '', 'interval', 'intervalMs'],
  ['sampleUnchanged', '', 'interval', 'intervalMs'],
  ['startupGrace', '', 'grace', 'graceMs'],
  ['createHealthRegistry', '', 'failures', 'failureThreshold'],
  ['createHealthRegistry', '', 'reset', 'openDurationMs'],
  ['createRouter', 'health', 'failures', 'failureThreshold'],
  ['createRouter', 'health', 'reset', 'openDurationMs'],
  ['routingLink', 'health', 'failures', 'failureThreshold'],
];

describe('renamed options: the old name is refused, naming the new one', () => {
  it.each(RENAMED)('%s: %s.%s -> %s', (name, path, old, renamed) => {
    const row = rows.find((r) => r.name === name) as Row;
    const options = row.valid();
    const at = path === '' ? options : objectAt(options, path);
    at[old] = at[renamed] ?? 1000;
    delete at[renamed];
    const error = thrown(row, options);
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toContain(
      `unknown option \`${join(path, old)}\` — did you mean \`${join(path, renamed)}\`?`,
    );
  });
});

/** Exported functions that take an options object, by package (a new one needs a row). */
const FACTORY =
  /^(create|with)[A-Z]|^protect$|^resilience|(Interceptor|Middleware|Link|Telemetry)$/;
/** Exported functions the pattern catches that take no options object, and why. */
const NOT_OPTIONS: Record<string, string> = {
  createManualClock: 'takes a start time',
  createCircuitBreakerState: 'takes a config object that validateCircuitBreakerConfig checks',
  createStatusPreservingFetch: 'takes a fetch function',
  composeInterceptors: 'takes a list of interceptors',
  createInboundCall: 'takes what a server binding read of its inbound call, not options',
  breakwaterServerInterceptor: 'takes no options (the margin is the client stack’s `propagate`)',
  breakwaterServerMiddleware: 'takes no options (the margin is the client stack’s `propagate`)',
};
/** Exported option-taking factories outside the pattern (readiness rules). */
const RULES = ['counterProgress', 'sampleUnchanged', 'belowLimit', 'ratioBelow', 'startupGrace'];

describe('the table covers every public factory', () => {
  it.each([
    ['core', { ...core, ...coreBreaker, ...coreHealth, ...coreNode, ...coreTime }],
    ['grpc-js', { ...grpcJs, ...grpcJsHealth }],
    ['nice-grpc', niceGrpc],
    ['trpc', trpc],
    ['otel', otel],
  ] as const)('%s', (pkg, exports) => {
    const factories = Object.entries(exports)
      .filter(([name, value]) => typeof value === 'function' && FACTORY.test(name))
      .map(([name]) => name)
      .filter((name) => !(name in NOT_OPTIONS));
    const expected = [...factories, ...(pkg === 'core' ? RULES : [])].sort();
    const covered = rows
      .filter((r) => r.pkg === pkg)
      .map((r) => r.name)
      .sort();
    expect(covered).toEqual(expected);
  });
});

describe('the issue examples', () => {
  it('protect({ timoutMs }) names the key and suggests timeoutMs', () => {
    expect(() => core.protect({ timoutMs: 1000 } as never)).toThrow(
      new TypeError('protect: unknown option `timoutMs` — did you mean `timeoutMs`?'),
    );
  });

  it('resilienceLink({ circuit: { circuit } }) names the nested path (the old stutter is gone)', () => {
    expect(() =>
      trpc.resilienceLink({ circuit: { circuit: { failureThreshold: 5 } } } as never),
    ).toThrow(/^resilienceLink: unknown option `circuit\.circuit`/);
  });

  it('resilienceMiddleware({ retry: { retryAttempts } }) suggests retry.attempts', () => {
    expect(() => niceGrpc.resilienceMiddleware({ retry: { retryAttempts: 3 } } as never)).toThrow(
      new TypeError(
        'resilienceMiddleware: unknown option `retry.retryAttempts` — did you mean `retry.attempts`?',
      ),
    );
  });

  it('an out-of-range nested value names its full path', () => {
    expect(() => trpc.resilienceLink({ retry: { backoff: { baseDelayMs: -1 } } })).toThrow(
      new RangeError('resilienceLink: retry.backoff.baseDelayMs must be >= 0, got -1'),
    );
  });

  it('a far-off key gets no suggestion', () => {
    expect(() => core.createPool({ concurrency: 1, banana: 1 } as never)).toThrow(
      new TypeError('createPool: unknown option `banana`'),
    );
  });
});
