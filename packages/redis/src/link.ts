import { createHash } from 'node:crypto';
import { type Clock, type Sleep, systemClock, systemSleep } from '@breakwater/core/time';
import type { Cluster, Redis } from 'ioredis';

/** An ioredis client or cluster; every facade sends its scripts through it. */
export type RedisClient = Redis | Cluster;

/**
 * What a facade does while Redis is unreachable or slower than `timeoutMs`:
 * `'local'` decides with a local limiter/budget/breaker sized to `localShare`
 * of the fleet's limits, `'open'` admits everything, `'closed'` refuses everything.
 */
export type RedisFallback = 'local' | 'open' | 'closed';

/** Options every Redis-backed facade takes. */
export interface RedisSharedOptions {
  /** The ioredis client (or cluster) the facade talks to. Required. */
  client: RedisClient;
  /** Name of the shared object; processes that use the same name share it. Required, non-empty. */
  name: string;
  /** Prefix of every Redis key the facade writes. Defaults to `'breakwater:'`. */
  prefix?: string;
  /**
   * Longest a Redis round trip may take before the facade stops waiting for it
   * and decides locally (decisions themselves never wait on Redis), in ms (> 0). Defaults to 5.
   */
  timeoutMs?: number;
  /** How decisions are made while Redis is down or slow. Defaults to `'local'`. */
  fallback?: RedisFallback;
  /**
   * Share of the fleet's limits the local fallback allows this process, in `(0, 1]`;
   * set it to 1 / (number of processes) so the fleet keeps its limit while Redis is away.
   * Defaults to 1.
   */
  localShare?: number;
  /** How often Redis is tried again while decisions are local, in ms (> 0). Defaults to 200. */
  retryMs?: number;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
  /** Timer used to bound each Redis round trip. Defaults to `systemSleep`. */
  sleep?: Sleep;
}

/** Keys of {@link RedisSharedOptions}. @internal */
export const SHARED_KEYS = [
  'client',
  'name',
  'prefix',
  'timeoutMs',
  'fallback',
  'localShare',
  'retryMs',
  'clock',
  'sleep',
] as const;

/** Counters of the link between a facade and Redis. */
export interface RedisLinkStats {
  /**
   * `'shared'` once a round trip was answered within `timeoutMs`; `'local'`
   * before that and while decisions fall back (a round trip failed or was
   * late, or — for the circuit — its subscriber's connection is closed).
   */
  mode: 'shared' | 'local';
  /** Round trips sent to Redis. */
  calls: number;
  /** Round trips that failed (connection lost, Redis error). */
  errors: number;
  /** Round trips that took longer than `timeoutMs`. */
  timeouts: number;
  /** Times the script was missing (restart, `SCRIPT FLUSH`, failover) and was sent again in full. */
  scriptReloads: number;
  /** Times decisions switched from shared to local. */
  fallbacks: number;
  /** Times decisions switched back from local to shared. */
  resumes: number;
}

/** Throws a `TypeError`/`RangeError` naming the full option path and the bad value. @internal */
export function badOption(fn: string, path: string, detail: string, value: unknown): never {
  const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
  const message = `${fn}: ${path} ${detail}, got ${shown}`;
  throw typeof value === 'number' ? new RangeError(message) : new TypeError(message);
}

/** Checks that `options` has only `known` keys. @internal */
export function checkKeys(fn: string, options: object, known: readonly string[]): void {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${fn}: options must be an object, got ${String(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new TypeError(`${fn}: unknown option \`${key}\``);
  }
}

/**
 * A number option: `undefined` gives `fallback` (required when that is `undefined`);
 * otherwise finite, above `min` (or >= with `inclusive`), at most `max`, and an
 * integer with `integer`. @internal
 */
export function numberOption(
  fn: string,
  path: string,
  value: unknown,
  fallback: number | undefined,
  min: number,
  { inclusive = false, max = Number.POSITIVE_INFINITY, integer = false } = {},
): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    (integer && !Number.isInteger(value)) ||
    (inclusive ? value < min : value <= min) ||
    value > max
  ) {
    const range = max === Number.POSITIVE_INFINITY ? '' : ` and <= ${max}`;
    const kind = integer ? 'an integer' : 'a finite number';
    badOption(fn, path, `must be ${kind} ${inclusive ? '>=' : '>'} ${min}${range}`, value);
  }
  return value;
}

/** Settings of a {@link RedisLink}, validated. @internal */
export interface LinkSettings {
  readonly client: RedisClient;
  readonly name: string;
  readonly prefix: string;
  readonly timeoutMs: number;
  readonly fallback: RedisFallback;
  readonly localShare: number;
  readonly retryMs: number;
  readonly clock: Clock;
  readonly sleep: Sleep;
}

/** Validates the options every facade shares. @internal */
export function linkSettings(fn: string, options: RedisSharedOptions): LinkSettings {
  const { client, name, prefix = 'breakwater:', fallback = 'local', clock, sleep } = options;
  if (typeof client !== 'object' || client === null || typeof client.evalsha !== 'function') {
    badOption(fn, 'client', 'must be an ioredis client or cluster', client);
  }
  if (typeof name !== 'string' || name === '')
    badOption(fn, 'name', 'must be a non-empty string', name);
  if (typeof prefix !== 'string') badOption(fn, 'prefix', 'must be a string', prefix);
  if (fallback !== 'local' && fallback !== 'open' && fallback !== 'closed') {
    badOption(fn, 'fallback', "must be 'local', 'open' or 'closed'", fallback);
  }
  if (clock !== undefined && typeof clock !== 'function')
    badOption(fn, 'clock', 'must be a function', clock);
  if (sleep !== undefined && typeof sleep !== 'function')
    badOption(fn, 'sleep', 'must be a function', sleep);
  return {
    client,
    name,
    prefix,
    timeoutMs: numberOption(fn, 'timeoutMs', options.timeoutMs, 5, 0),
    fallback,
    localShare: numberOption(fn, 'localShare', options.localShare, 1, 0, { max: 1 }),
    retryMs: numberOption(fn, 'retryMs', options.retryMs, 200, 0),
    clock: clock ?? systemClock,
    sleep: sleep ?? systemSleep,
  };
}

/** A Lua script sent by EVALSHA, and in full once Redis answers NOSCRIPT. @internal */
export interface Script {
  readonly source: string;
  readonly sha: string;
}

/** `id` with `%`, `:`, `{` and `}` written as `%XX`: a name or key that cannot end its part or its hash tag early. */
function escapeId(id: string): string {
  return id.replace(/[%:{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The Redis key `prefix{id1:id2…}:part`. The ids (a facade's name, a keyed
 * limiter's key) are escaped, so distinct ids never give the same key (limiter
 * `api` with key `v2:alice` and limiter `api:v2` with key `alice` stay apart),
 * and the hash tag — the ids — ends where it should whatever they hold. Ids
 * without those four characters read as written.
 * @internal
 */
export function redisKey(prefix: string, ids: readonly string[], part: string): string {
  return `${prefix}{${ids.map(escapeId).join(':')}}:${part}`;
}

/** Prepares `source` for {@link RedisLink.run}. @internal */
export function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/** The two ioredis methods the link calls, typed once for a client or a cluster. */
interface Evaluator {
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(source: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/** A round trip waiting for its reply or its deadline, whichever comes first. */
interface InFlight {
  readonly deadline: number;
  readonly resolve: (reply: unknown) => void;
  settled: boolean;
}

/**
 * The round trips sent with one time budget, oldest first: they were sent in
 * order with the same budget, so their deadlines are in order too, and one
 * timer (armed for the oldest) bounds them all.
 */
interface Watch {
  readonly queue: InFlight[];
  armed: boolean;
}

/**
 * The connection between one facade and Redis: runs scripts within the time
 * budget and tracks whether decisions are shared or local. A round trip that
 * fails or outlives `timeoutMs` switches decisions to local; a round trip that
 * succeeds within it switches them back. While local, Redis is tried again at
 * most every `retryMs`.
 * @internal
 */
export class RedisLink {
  /** Whether decisions are shared (Redis healthy) or local. */
  shared = true;
  /** Smoothed round-trip time of answers within the budget, in ms: leases cover demand over it. */
  rttMs = 0;
  /** While local: when Redis may be tried again. */
  private retryAt = Number.NEGATIVE_INFINITY;
  private readonly redis: Evaluator;
  /** In-flight round trips per time budget (ms). */
  private readonly watches = new Map<number, Watch>();
  readonly counters = {
    calls: 0,
    errors: 0,
    timeouts: 0,
    scriptReloads: 0,
    fallbacks: 0,
    resumes: 0,
  };

  constructor(readonly settings: LinkSettings) {
    this.redis = settings.client as unknown as Evaluator;
    // Until Redis has answered once, nothing is known to be shared.
    this.shared = false;
  }

  /**
   * The Redis key of this facade's `part`, hash-tagged by `ids` (default the
   * facade's name) so one object's keys share a Cluster slot. See {@link redisKey}.
   */
  key(part: string, ...ids: string[]): string {
    return redisKey(this.settings.prefix, ids.length === 0 ? [this.settings.name] : ids, part);
  }

  /** Whether a round trip may be sent now: always while shared, every `retryMs` while local. */
  mayTry(now: number): boolean {
    if (this.shared || now >= this.retryAt) {
      if (!this.shared) this.retryAt = now + this.settings.retryMs;
      return true;
    }
    return false;
  }

  /**
   * Runs `s` and resolves with its reply, or with `undefined` when Redis failed
   * or did not answer within `budgetMs` (default `timeoutMs`; decisions are then
   * local). Never rejects. A reply that arrives after the budget still did its
   * work in Redis (tokens taken): it goes to `late`, so nothing taken from the
   * fleet is lost. A round trip costs no timer of its own: a limiter with a
   * lease per user sends thousands per second, and a timer plus an
   * AbortController each cost more than the round trip's own work.
   */
  run(
    s: Script,
    keys: readonly string[],
    args: readonly (string | number)[],
    budgetMs = this.settings.timeoutMs,
    late?: (reply: unknown) => void,
  ): Promise<unknown> {
    this.counters.calls++;
    const sentAt = this.settings.clock();
    return new Promise((resolve) => {
      const entry: InFlight = { deadline: sentAt + budgetMs, resolve, settled: false };
      this.watch(budgetMs, entry);
      this.send(s, keys, args).then(
        (reply) => {
          if (entry.settled) {
            late?.(reply);
            return;
          }
          entry.settled = true;
          const took = this.settings.clock() - sentAt;
          this.rttMs = this.rttMs === 0 ? took : this.rttMs * 0.8 + took * 0.2;
          this.up();
          resolve(reply);
        },
        () => {
          if (entry.settled) return;
          entry.settled = true;
          this.counters.errors++;
          this.down();
          resolve(undefined);
        },
      );
    });
  }

  /** Queues `entry` behind the others of its budget and arms the budget's timer if idle. */
  private watch(budgetMs: number, entry: InFlight): void {
    let w = this.watches.get(budgetMs);
    if (w === undefined) {
      w = { queue: [], armed: false };
      this.watches.set(budgetMs, w);
    }
    w.queue.push(entry);
    if (!w.armed) this.arm(w, budgetMs);
  }

  /** Sleeps until the oldest round trip's deadline, then times out every one past it. */
  private arm(w: Watch, budgetMs: number): void {
    w.armed = true;
    const head = w.queue[0] as InFlight;
    const wait = Math.max(0, Math.min(budgetMs, head.deadline - this.settings.clock()));
    this.settings
      .sleep(wait)
      // A reply may have arrived in the same event-loop turn as the timer: give I/O one more turn.
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(() => {
        const now = this.settings.clock();
        let expired = 0;
        while (expired < w.queue.length) {
          const e = w.queue[expired] as InFlight;
          if (!e.settled && e.deadline > now) break;
          expired++;
          if (e.settled) continue;
          e.settled = true;
          this.counters.timeouts++;
          this.down();
          e.resolve(undefined);
        }
        w.queue.splice(0, expired);
        // Answered round trips at the head leave with the next sweep; the queue stays short.
        if (w.queue.length > 0) this.arm(w, budgetMs);
        else w.armed = false;
      });
  }

  private async send(
    s: Script,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    try {
      return await this.redis.evalsha(s.sha, keys.length, ...keys, ...args);
    } catch (e) {
      // Restart, SCRIPT FLUSH or failover to a replica that never saw the script.
      if (!(e instanceof Error) || !e.message.startsWith('NOSCRIPT')) throw e;
      this.counters.scriptReloads++;
      return await this.redis.eval(s.source, keys.length, ...keys, ...args);
    }
  }

  /** Decisions are local from now: a round trip failed, or a connection the facade relies on closed. */
  down(): void {
    if (this.shared) this.counters.fallbacks++;
    this.shared = false;
    this.retryAt = this.settings.clock() + this.settings.retryMs;
  }

  private up(): void {
    // The first answer after start-up is no resumption: nothing had fallen back.
    if (!this.shared && this.counters.fallbacks > 0) this.counters.resumes++;
    this.shared = true;
  }

  /** A snapshot of the counters. */
  stats(): RedisLinkStats {
    return Object.assign(
      { mode: this.shared ? ('shared' as const) : ('local' as const) },
      this.counters,
    );
  }
}
