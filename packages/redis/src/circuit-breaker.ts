import { randomUUID } from 'node:crypto';
import {
  type CircuitBreaker,
  type CircuitBreakerOptions,
  CircuitOpenError,
  type CircuitState,
  createCircuitBreaker,
} from '@breakwater/core';
import type { Disposable, Subscribe } from '@breakwater/core/adapter';
import type {
  CircuitBreakerSnapshot,
  CircuitRejection,
  CircuitStateChange,
} from '@breakwater/core/breaker';
import {
  checkKeys,
  linkSettings,
  type RedisClient,
  RedisLink,
  type RedisLinkStats,
  type RedisSharedOptions,
  script,
} from './link.js';

/**
 * Opens the fleet's circuit: stores when it ends (Redis's clock) and tells
 * every process. An open period that ends later is kept. The stored state
 * outlives the cool-down by as long again, so a process that starts or
 * reconnects meanwhile still learns the circuit is being probed.
 * KEYS state, probe lock; ARGV open ms, channel, sender. @internal
 */
const OPEN = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ms = tonumber(ARGV[1])
local current = tonumber(redis.call('GET', KEYS[1]))
if current ~= nil and current > now + ms then ms = current - now end
redis.call('SET', KEYS[1], now + ms, 'PX', ms * 2 + 1000)
redis.call('DEL', KEYS[2])
redis.call('PUBLISH', ARGV[2], 'open ' .. ms .. ' ' .. ARGV[3])
return ms
`;

/** Closes the fleet's circuit and tells every process. KEYS state, probe lock; ARGV channel, sender. @internal */
const CLOSE = `
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('PUBLISH', ARGV[1], 'closed ' .. ARGV[2])
return 1
`;

/**
 * Ms left of the fleet's open period (<= 0: being probed), or false when closed.
 * KEYS state. @internal
 */
const STATUS = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local ends = tonumber(redis.call('GET', KEYS[1]))
if ends == nil then return false end
local t = redis.call('TIME')
return ends - (tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
`;

/**
 * The one probe of this cool-down: { 1, 0 } when this process got it; { 0, ms }
 * when the fleet's open period has not ended or another process holds the
 * probe, with the ms until it is worth asking again. KEYS state, probe lock;
 * ARGV lock ms. @internal
 */
const PROBE = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ends = tonumber(redis.call('GET', KEYS[1]))
if ends ~= nil and ends > now then return { 0, ends - now } end
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[1]) then return { 1, 0 } end
return { 0, redis.call('PTTL', KEYS[2]) }
`;

/** Round trips that decide nothing (publishing, reading the state) may take this long. */
const CONTROL_MS = 1000;

/** Options of {@link createRedisCircuitBreaker}. */
export interface RedisCircuitBreakerOptions
  extends Omit<RedisSharedOptions, 'fallback' | 'localShare'> {
  /**
   * This process's breaker, or options for `createCircuitBreaker`: it counts
   * this process's calls, and its trips are spread to the fleet. Defaults to
   * `createCircuitBreaker()` with its defaults.
   */
  breaker?: CircuitBreaker | CircuitBreakerOptions;
  /**
   * The connection that listens for the fleet's transitions (a connection in
   * subscriber mode can send nothing else). Defaults to `client.duplicate()`,
   * closed by `close()`.
   */
  subscriber?: RedisClient;
}

/** A fleet-wide {@link CircuitBreaker} kept in step through Redis. */
export interface RedisCircuitBreaker extends CircuitBreaker {
  /** Counters of the link to Redis (mode, round trips, fallbacks). */
  linkStats(): RedisLinkStats;
  /**
   * Resolves once the subscriber listens and the fleet's state has been read;
   * rejects with the first failure before that (a wrong password, Redis
   * unreachable, the state not read within 1 s), naming the circuit and the
   * cause. Either way the breaker decides locally until Redis answers, and
   * joins the fleet when it does. A rejection nobody awaits is not unhandled.
   */
  readonly ready: Promise<void>;
  /** Stops listening; closes the subscriber if this breaker created it. */
  close(): Promise<void>;
}

const CIRCUIT_KEYS = [
  'client',
  'name',
  'prefix',
  'timeoutMs',
  'retryMs',
  'clock',
  'sleep',
  'breaker',
  'subscriber',
];

function isBreaker(value: object): value is CircuitBreaker {
  const b = value as Partial<CircuitBreaker>;
  return typeof b.tryAcquire === 'function' && typeof b.trip === 'function';
}

/** A listener list in the shape of core's events. */
class Listeners<T> {
  private list: Array<(event: T) => void> = [];
  readonly on: Subscribe<T> = (listener): Disposable => {
    this.list = [...this.list, listener];
    return {
      dispose: () => {
        this.list = this.list.filter((l) => l !== listener);
      },
    };
  };
  emit(event: T): void {
    for (const l of this.list) {
      try {
        l(event);
      } catch {
        // An observer must never break the call it observes.
      }
    }
  }
}

/**
 * Creates a circuit breaker shared by every process that uses the same Redis
 * and `name`. Each process keeps its own breaker (`breaker`), which decides
 * every call synchronously; this facade keeps the fleet in step:
 * - when this process's breaker opens, the open period is stored in Redis
 *   (with an expiry) and published; every other process trips its breaker for
 *   the time left, so the circuit is open everywhere;
 * - when the cool-down ends, only the process that takes the cool-down's
 *   probe lock in Redis may send the probe; the others refuse until its
 *   outcome arrives: one probe per cool-down for the whole fleet;
 * - the probe's outcome spreads the same way: closed everywhere, or open
 *   again everywhere.
 * While Redis is down or slow, each process's breaker decides alone (and
 * probes alone); the fleet's state is read again on reconnect.
 * @example
 * const circuit = createRedisCircuitBreaker({ client: redis, name: 'payments', breaker: { failureThreshold: 5 } });
 * const run = protect({ circuit });
 */
export function createRedisCircuitBreaker(
  options: RedisCircuitBreakerOptions,
): RedisCircuitBreaker {
  const fn = 'createRedisCircuitBreaker';
  for (const key of ['fallback', 'localShare']) {
    if (typeof options === 'object' && options !== null && key in options) {
      throw new TypeError(
        `${fn}: \`${key}\` is an option of the limiters and the budget, not of the circuit: while Redis is away its own breaker decides alone`,
      );
    }
  }
  checkKeys(fn, options, CIRCUIT_KEYS);
  const settings = linkSettings(fn, options);
  const given = options.breaker;
  if (given !== undefined && (typeof given !== 'object' || given === null)) {
    throw new TypeError(
      `${fn}: breaker must be a circuit breaker or its options, got ${String(given)}`,
    );
  }
  const local: CircuitBreaker =
    given !== undefined && isBreaker(given)
      ? given
      : createCircuitBreaker(Object.assign({ clock: settings.clock }, given));
  const link = new RedisLink(settings);
  const stateKey = link.key('circuit');
  const lockKey = link.key('probe');
  const keys = [stateKey, lockKey];
  // The fleet's transitions are published on a channel named like the state key.
  const channel = stateKey;
  const sender = randomUUID();
  const open = script(OPEN);
  const close = script(CLOSE);
  const status = script(STATUS);
  const probe = script(PROBE);
  const clock = settings.clock;
  const control = Math.max(settings.timeoutMs, CONTROL_MS);
  const rejections = new Listeners<CircuitRejection>();
  const ownSubscriber = options.subscriber === undefined;
  const subscriber =
    options.subscriber ?? (settings.client as { duplicate(): RedisClient }).duplicate();

  /** This process holds the probe lock of the current cool-down. */
  let prober = false;
  /** A probe-lock request is in flight. */
  let asking = false;
  /** Another process holds the lock until about then. */
  let askAgainAt = 0;
  /** A transition being applied from the fleet: not published back. */
  let applying = false;

  const apply = (change: () => void) => {
    applying = true;
    try {
      change();
    } finally {
      applying = false;
    }
  };

  /** Brings this process's breaker to the fleet's state: `ms` left open (<= 0: probing), or closed. */
  const follow = (ms: number | null) => {
    prober = false;
    askAgainAt = 0;
    if (ms === null) {
      if (local.state !== 'closed') apply(() => local.reset());
    } else {
      // Being probed elsewhere: half-open here at once, and the probe lock decides.
      apply(() => local.trip(Math.max(0, ms)));
    }
  };

  const onMessage = (from: string, message: string) => {
    if (from !== channel) return;
    const [kind, a, b] = message.split(' ');
    if (kind === 'open' && b !== sender) follow(Number(a));
    else if (kind === 'closed' && a !== sender) follow(null);
  };

  /** Reads the fleet's stored state; false when Redis did not answer in time. */
  const sync = async (): Promise<boolean> => {
    const left = await link.run(status, [stateKey], [], control);
    if (typeof left === 'number') follow(left);
    return left !== undefined;
  };

  let settleReady: (error?: Error) => void = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    settleReady = (error) => (error === undefined ? resolve() : reject(error));
  });
  // A process that never awaits `ready` must not crash on its rejection.
  ready.catch(() => {});
  /** `ready` fails with the first failure before the breaker listened (later ones change nothing). */
  const failedToListen = (cause: unknown) => {
    const why = cause instanceof Error ? cause.message : String(cause);
    settleReady(
      new Error(`${fn}: circuit ${JSON.stringify(settings.name)} cannot listen to Redis: ${why}`, {
        cause,
      }),
    );
  };
  /** Ends the catch-up reads of `listen` (and their waits) when the breaker closes. */
  const closing = new AbortController();
  const listen = async () => {
    try {
      await subscriber.subscribe(channel);
    } catch (e) {
      // Not connected after all: the next 'ready' listens.
      failedToListen(e);
      return;
    }
    // Messages missed while not listening: read the stored state. The command
    // client may reconnect later than the subscriber: read again every
    // `retryMs` while the subscriber listens, so the fleet is joined without
    // waiting for a call.
    while (!(await sync())) {
      failedToListen(new Error(`the fleet's state was not read within ${control} ms`));
      await settings.sleep(settings.retryMs, closing.signal).catch(() => {});
      if (closing.signal.aborted || subscriber.status !== 'ready') return;
    }
    settleReady();
  };
  subscriber.on('message', onMessage);
  // On every (re)connection: listen again and catch up.
  const onReady = () => {
    void listen();
  };
  subscriber.on('ready', onReady);
  // While the subscriber is away this process hears none of the fleet's
  // transitions: its breaker decides alone, whether or not a round trip failed yet.
  const onClose = () => link.down();
  subscriber.on('close', onClose);
  // A connection error is handled by reconnecting (never unhandled); the first one fails `ready`.
  subscriber.on('error', failedToListen);
  if (subscriber.status === 'ready') void listen();

  const changes = local.onStateChange((e: CircuitStateChange) => {
    prober = false;
    if (applying) return;
    if (e.to === 'open') {
      void link.run(open, keys, [e.openDurationMs ?? 0, channel, sender], control);
    } else if (e.to === 'closed') {
      void link.run(close, keys, [channel, sender], control);
    }
  });

  const askProbe = (now: number) => {
    if (asking || now < askAgainAt || !link.mayTry(now)) return;
    asking = true;
    const lockMs = Math.max(1, Math.round(local.toJSON().openDurationMs));
    link.run(probe, keys, [lockMs]).then((reply) => {
      asking = false;
      if (!Array.isArray(reply)) return;
      if (Number(reply[0]) === 1) prober = true;
      else askAgainAt = clock() + Math.max(1, Number(reply[1]));
    });
  };

  const refuse = (): number => {
    rejections.emit({ name: settings.name, state: 'half-open', retryAfterMs: 0 });
    return -1;
  };

  let manualPermit = -1;
  const breaker: RedisCircuitBreaker = {
    get state(): CircuitState {
      return local.state;
    },
    tryAcquire() {
      // While shared, a half-open breaker probes only with the fleet's probe lock.
      if (!prober && link.shared && local.state === 'half-open') {
        askProbe(clock());
        return refuse();
      }
      return local.tryAcquire();
    },
    // Bound, not wrapped: every argument reaches the local breaker, whatever the signature grows.
    release: local.release.bind(local),
    async execute(run, callOptions) {
      const signal = callOptions?.signal;
      const permit = breaker.tryAcquire();
      if (permit < 0) {
        throw new CircuitOpenError(
          Object.assign({ retryAfterMs: local.retryAfterMs() }, { circuit: settings.name }),
        );
      }
      const start = clock();
      try {
        const value = await run(signal ?? new AbortController().signal);
        local.release(permit, { outcome: 'success', durationMs: clock() - start });
        return value;
      } catch (e) {
        local.release(permit, {
          outcome: signal?.aborted ? 'neutral' : 'failure',
          durationMs: clock() - start,
        });
        throw e;
      }
    },
    canExecute() {
      manualPermit = breaker.tryAcquire();
      return manualPermit >= 0;
    },
    onSuccess(durationMs?: number) {
      local.release(manualPermit, { outcome: 'success', durationMs });
    },
    onFailure(durationMs?: number) {
      local.release(manualPermit, { outcome: 'failure', durationMs });
    },
    retryAfterMs: () => local.retryAfterMs(),
    trip: (ms?: number) => local.trip(ms),
    halfOpen: () => local.halfOpen(),
    isolate: () => local.isolate(),
    reset: () => local.reset(),
    toJSON: (): CircuitBreakerSnapshot => local.toJSON(),
    onStateChange: local.onStateChange,
    onReject: (listener) => {
      const mine = rejections.on(listener);
      const theirs = local.onReject(listener);
      return {
        dispose() {
          mine.dispose();
          theirs.dispose();
        },
      };
    },
    linkStats: () => link.stats(),
    ready,
    async close() {
      closing.abort();
      changes.dispose();
      subscriber.off('message', onMessage);
      subscriber.off('ready', onReady);
      subscriber.off('close', onClose);
      subscriber.off('error', failedToListen);
      if (ownSubscriber) subscriber.disconnect();
      else await subscriber.unsubscribe(channel).catch(() => {});
    },
  };
  return breaker;
}
