// The round trip's table, shared by the grpc-js and nice-grpc adapters' tests: one service
// config, given to grpc-js ('grpc.service_config', its own retries on) and to Breakwater,
// must look the same to a real grpc-js server: the attempts, the gaps between them, each
// attempt's deadline and the hedging delay, per method.
import {
  Metadata,
  Server,
  ServerCredentials,
  type ServiceDefinition,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';

const bytes = (b: Buffer) => b;
const method = (path: string) => ({
  path,
  requestStream: false,
  responseStream: false,
  requestSerialize: bytes,
  requestDeserialize: bytes,
  responseSerialize: bytes,
  responseDeserialize: bytes,
});
export const CART = { Get: method('/shop.Cart/Get'), Pay: method('/shop.Cart/Pay') } as const;

/** What the server saw of one attempt: when it arrived and how long its deadline had left. */
interface Attempt {
  atMs: number;
  remainingMs: number;
}

/** What the server answers attempt `n` (1-based): a status code after `afterMs`, or nothing. */
export type Behaviour = (n: number) => { code: number; afterMs?: number } | 'hang';

interface Observed {
  attempts: Attempt[];
  code: number;
  elapsedMs: number;
}

export const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup.splice(0).reverse()) fn();
});

async function startServer(behaviour: Behaviour): Promise<{ port: number; seen: Attempt[] }> {
  const server = new Server();
  const seen: Attempt[] = [];
  const handler = (
    call: { getDeadline(): Date | number },
    callback: (error: Partial<ServiceError> | null, value?: Buffer) => void,
  ) => {
    const now = Date.now();
    const deadline = Number(call.getDeadline());
    seen.push({ atMs: performance.now(), remainingMs: deadline - now });
    const answer = behaviour(seen.length);
    if (answer === 'hang') return;
    const reply = () =>
      answer.code === status.OK
        ? callback(null, Buffer.from('ok'))
        : callback({ code: answer.code, details: 'scripted', metadata: new Metadata() });
    if (answer.afterMs === undefined) reply();
    else setTimeout(reply, answer.afterMs);
  };
  server.addService(CART as unknown as ServiceDefinition, { Get: handler, Pay: handler });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, p) =>
      error ? reject(error) : resolve(p),
    ),
  );
  cleanup.push(() => server.forceShutdown());
  return { port, seen };
}

/** Connects a client of kind `client`, configured by service config `json`, to `address`; resolves with a way to call a method for its status code. */
export type Connect = (
  client: 'grpc-js' | 'breakwater',
  json: string,
  address: string,
) => Promise<(name: keyof typeof CART) => Promise<number>>;

/** What the server saw of one call of method `name`, made by a client `connect` made. */
async function observe(
  connect: Connect,
  client: 'grpc-js' | 'breakwater',
  json: string,
  behaviour: Behaviour,
  name: keyof typeof CART,
): Promise<Observed> {
  const { port, seen } = await startServer(behaviour);
  const call = await connect(client, json, `127.0.0.1:${port}`);
  const started = performance.now();
  const code = await call(name);
  // A hedge that lost may still be arriving: let the server see everything that was sent.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const attempts = seen.map((a) => ({ atMs: a.atMs - started, remainingMs: a.remainingMs }));
  return { attempts, code, elapsedMs: performance.now() - started };
}

/** Every row, with grpc-js's own retries and with Breakwater's, as clients of `connect`. */
export function roundTrip(title: string, connect: Connect): void {
  describe(title, () => {
    it.each(rows)('$aspect', async ({ config, method = 'Get', behaviour, expectSame }) => {
      const json = JSON.stringify(config);
      const grpcJs = await observe(connect, 'grpc-js', json, behaviour, method);
      expectSame(grpcJs);
      const breakwater = await observe(connect, 'breakwater', json, behaviour, method);
      expectSame(breakwater);
      expect(breakwater.attempts.length).toBe(grpcJs.attempts.length);
      expect(breakwater.code).toBe(grpcJs.code);
    });
  });
}

export const gaps = (o: Observed) =>
  o.attempts.slice(1).map((a, i) => a.atMs - (o.attempts[i]?.atMs ?? 0));
/** Transport and timer slack on a loaded 2-core machine. */
export const SLACK_MS = 60;

const retryPolicy = {
  maxAttempts: 4,
  initialBackoff: '0.1s',
  maxBackoff: '0.2s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};

interface Row {
  aspect: string;
  config: object;
  /** Defaults to `Get`. */
  method?: keyof typeof CART;
  behaviour: Behaviour;
  expectSame(observed: Observed): void;
}

const retryingDefault = { methodConfig: [{ name: [{}], retryPolicy }] };
const always: (code: number) => Behaviour = (code) => () => ({ code });
const endsAfter = (attempts: number, code: number) => (o: Observed) => {
  expect(o.attempts).toHaveLength(attempts);
  expect(o.code).toBe(code);
};

const rows: Row[] = [
  {
    aspect: 'attempts: maxAttempts of a listed status',
    config: retryingDefault,
    behaviour: always(status.UNAVAILABLE),
    expectSame: endsAfter(4, status.UNAVAILABLE),
  },
  {
    aspect: 'attempts: a status not listed is not retried',
    config: retryingDefault,
    behaviour: always(status.ABORTED),
    expectSame: endsAfter(1, status.ABORTED),
  },
  {
    aspect: 'backoff bounds: min(initial × multiplier^(n−1), max) × [0.8, 1.2]',
    config: retryingDefault,
    behaviour: always(status.UNAVAILABLE),
    expectSame: (o) => {
      const schedule = [100, 200, 200];
      gaps(o).forEach((gap, i) => {
        expect(gap).toBeGreaterThanOrEqual((schedule[i] ?? 0) * 0.8 - 5);
        expect(gap).toBeLessThanOrEqual((schedule[i] ?? 0) * 1.2 + SLACK_MS);
      });
      expect(gaps(o)).toHaveLength(3);
    },
  },
  {
    aspect: "per-attempt deadline: every attempt carries the call's deadline, not a fresh one",
    config: { methodConfig: [{ name: [{}], timeout: '2s', retryPolicy }] },
    behaviour: (n) => (n < 3 ? { code: status.UNAVAILABLE } : { code: status.OK }),
    expectSame: (o) => {
      expect(o.code).toBe(status.OK);
      expect(o.attempts).toHaveLength(3);
      for (const a of o.attempts) {
        // The absolute deadline each attempt was sent with: the call's start + 2 s.
        expect(Math.abs(a.atMs + a.remainingMs - 2_000)).toBeLessThanOrEqual(SLACK_MS);
      }
    },
  },
  {
    aspect: 'call deadline: timeout ends the call, whatever the attempts left',
    config: { methodConfig: [{ name: [{}], timeout: '1s', retryPolicy }] },
    behaviour: () => 'hang',
    expectSame: (o) => {
      expect(o.code).toBe(status.DEADLINE_EXCEEDED);
      expect(o.attempts).toHaveLength(1);
      expect(o.elapsedMs).toBeGreaterThanOrEqual(990);
      expect(o.elapsedMs).toBeLessThanOrEqual(1_000 + 100 + SLACK_MS);
    },
  },
  {
    aspect: 'hedging delay: a hedge every hedgingDelay, up to maxAttempts',
    config: {
      methodConfig: [{ name: [{}], hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.2s' } }],
    },
    behaviour: () => ({ code: status.OK, afterMs: 700 }),
    expectSame: (o) => {
      expect(o.code).toBe(status.OK);
      expect(o.attempts).toHaveLength(3);
      // Gaps as the server saw the attempts arrive: a hedge timer never fires early, but the earlier
      // attempt's own transit can arrive a few ms late (193.9 ms seen in CI), so 10% below.
      for (const gap of gaps(o)) {
        expect(gap).toBeGreaterThanOrEqual(180);
        expect(gap).toBeLessThanOrEqual(200 + SLACK_MS);
      }
    },
  },
  // Per-method rows: they need the per-method `methods` option of resilienceInterceptor.
  {
    aspect: "per method: a service's retryPolicy covers its methods",
    config: {
      methodConfig: [
        { name: [{ service: 'shop.Cart' }], retryPolicy: { ...retryPolicy, maxAttempts: 3 } },
        { name: [{ service: 'shop.Cart', method: 'Pay' }], timeout: '1s' },
      ],
    },
    behaviour: always(status.UNAVAILABLE),
    expectSame: (o) => {
      expect(o.attempts).toHaveLength(3);
      expect(o.attempts[0]?.remainingMs).toBe(Number.POSITIVE_INFINITY);
    },
  },
  {
    aspect: "per method: a method's own entry replaces its service's (no retry, its timeout)",
    config: {
      methodConfig: [
        { name: [{ service: 'shop.Cart' }], retryPolicy: { ...retryPolicy, maxAttempts: 3 } },
        { name: [{ service: 'shop.Cart', method: 'Pay' }], timeout: '1s' },
      ],
    },
    method: 'Pay',
    behaviour: always(status.UNAVAILABLE),
    expectSame: (o) => {
      expect(o.attempts).toHaveLength(1);
      expect(Math.abs((o.attempts[0]?.remainingMs ?? 0) - 1_000)).toBeLessThanOrEqual(SLACK_MS);
    },
  },
  {
    aspect: "per method: a method's hedgingPolicy over the default's retryPolicy",
    config: {
      methodConfig: [
        { name: [{}], retryPolicy },
        {
          name: [{ service: 'shop.Cart', method: 'Pay' }],
          hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.1s' },
        },
      ],
    },
    method: 'Pay',
    behaviour: () => ({ code: status.OK, afterMs: 400 }),
    expectSame: (o) => {
      expect(o.attempts).toHaveLength(2);
      const [gap] = gaps(o);
      expect(gap).toBeGreaterThanOrEqual(90);
      expect(gap).toBeLessThanOrEqual(100 + SLACK_MS);
    },
  },
];
