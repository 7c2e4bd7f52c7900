import type { RedisLink } from './link.js';

/**
 * Takes tokens from one or more shared buckets of the same shape, each in one
 * atomic step, on Redis's own clock (so processes with skewed clocks agree).
 * The state is in milli-tokens, so integer rates refill without floating drift.
 * KEYS bucket hashes; ARGV capacity, tokens per second, lease ms, then the
 * tokens wanted from each key in KEYS order (a key listed twice is taken
 * from twice, in order).
 * Replies { granted, ms before asking again } per key, flat: when short, until
 * `want` tokens are back but at most the lease ms, and never before one token
 * is back (a slow bucket is not polled faster than it refills); when the grant
 * emptied the bucket, until one token is back (nobody can get one sooner, so
 * asking would be a wasted round trip). A keyed limiter sends the refills of
 * many keys in one call: the script runs atomically, so each key's decision
 * is as if it were sent alone.
 * @internal
 */
export const TAKE_TOKENS = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local max = tonumber(ARGV[1]) * 1000
local perMs = tonumber(ARGV[2])
local leaseMs = tonumber(ARGV[3])
local ttl = math.ceil(max / perMs) + 1000
local out = {}
for i = 1, #KEYS do
  local want = tonumber(ARGV[3 + i])
  local s = redis.call('HMGET', KEYS[i], 'u', 't')
  local units = tonumber(s[1])
  local last = tonumber(s[2])
  if units == nil or last == nil then
    units = max
    last = now
  end
  if now > last then
    units = math.min(max, units + (now - last) * perMs)
    last = now
  end
  local granted = math.min(want, math.floor(units / 1000))
  if granted < 0 then granted = 0 end
  units = units - granted * 1000
  redis.call('HSET', KEYS[i], 'u', string.format('%.3f', units), 't', last)
  redis.call('PEXPIRE', KEYS[i], ttl)
  local wait = 0
  if granted < want then
    wait = math.min(math.ceil((want * 1000 - units) / perMs), leaseMs)
    if units < 1000 then wait = math.max(wait, math.ceil((1000 - units) / perMs)) end
  elseif units < 1000 then
    wait = math.ceil((1000 - units) / perMs)
  end
  out[2 * i - 1] = granted
  out[2 * i] = wait
end
return out
`;

/**
 * A local stock of units taken from Redis ahead of demand: decisions spend it
 * without a round trip, and a refill is sent before it runs out. The lease
 * size follows this process's demand over the last `leaseMs`, so a busy
 * process makes few round trips and an idle one holds little.
 * @internal
 */
export class Lease {
  /** Units on hand. */
  stock = 0;
  /** No reply from Redis yet: what the shared stock holds is unknown. */
  fresh = true;
  /** The fallback episode whose start emptied this key's local bucket (keyed limiter). */
  drainedFor = 0;
  /** When the stock was last topped up (it expires `keepMs` later). */
  private at = 0;
  /** A refill is in flight. */
  private fetching = false;
  /** No refill before this time (the shared stock is empty until then). */
  nextAt = 0;
  /** Units asked by decisions since the last refill. */
  private demand = 0;
  private demandSince = Number.NaN;
  /** Estimated demand in units per ms. */
  private rate = 0;
  /** Size of the last request; a refill starts below half of it. */
  private lowWater = 0;
  /** When `take` was last called (none yet: the first gap comes out 0). */
  private calledAt = Number.POSITIVE_INFINITY;
  /** Ms between the last two calls of `take` (0 until there were two). */
  private gapMs = 0;
  /**
   * Units admitted here without Redis (a fallback, a key's first call): the
   * next refills take them from the shared stock too, unused, so the fleet's
   * count stays whole and Redis's stock, grown meanwhile, adds no burst.
   */
  private debt = 0;

  constructor(
    private readonly link: RedisLink,
    private readonly leaseMs: number,
    private readonly maxLease: number,
    private readonly ttlMs: number,
    /**
     * Sends one refill asking for `want` units; resolves with the script's reply,
     * or `undefined` when Redis failed or was too slow; a reply after that goes to `late`.
     */
    private readonly send: (want: number, late: (reply: unknown) => void) => Promise<unknown>,
    /** Told how many units expired unused (a budget gives them back). Defaults to dropping them. */
    private readonly onExpire?: (units: number) => void,
  ) {}

  /**
   * Spends `n` units from the stock, or returns false. Starts a refill when the
   * stock runs low; never waits for it.
   */
  take(n: number, now: number): boolean {
    this.demand += n;
    if (this.stock > 0 && now - this.at > this.keepMs()) this.expire();
    this.gapMs = Math.max(0, now - this.calledAt);
    this.calledAt = now;
    if (this.stock >= n) {
      this.stock -= n;
      if (this.stock < this.lowWater) this.refill(now);
      return true;
    }
    this.refill(now);
    return false;
  }

  /**
   * How long stock may stay unused: `ttlMs`, or for a limiter two of this
   * process's intervals between calls if longer. A limiter's expired units are
   * lost to the fleet (only a budget gives them back), and a key this process
   * calls less often than every `ttlMs` gets its token for its next call,
   * seconds away: dropped after `ttlMs`, every such token would expire unused.
   * Kept this long is one token (the lease is 1 when demand is this slow),
   * already taken from the fleet's count.
   */
  private keepMs(): number {
    return this.onExpire === undefined ? Math.max(this.ttlMs, 2 * this.gapMs) : this.ttlMs;
  }

  /** Drops stock older than `keepMs`: a process that stopped asking must not hoard. */
  private expire(): void {
    this.onExpire?.(this.stock);
    this.stock = 0;
  }

  /** Records `n` units admitted without Redis, owed to the shared stock (at most `cap` in all). */
  owe(n: number, cap: number): void {
    this.debt = Math.min(cap, this.debt + n);
  }

  /** Ms until a refused request might succeed. */
  retryAfterMs(now: number): number {
    return Math.max(1, Math.ceil(this.nextAt - now));
  }

  /** Sends a refill unless one is in flight, the shared stock is known empty, or Redis is resting. */
  refill(now: number): void {
    if (this.fetching || now < this.nextAt || !this.link.mayTry(now)) return;
    const elapsed = Number.isNaN(this.demandSince) ? this.leaseMs : now - this.demandSince;
    // Demand averaged over the last leaseMs: recent calls count fully, the older estimate fades.
    this.rate =
      (this.rate * Math.max(0, this.leaseMs - elapsed) + this.demand) /
      Math.max(this.leaseMs, elapsed, 1);
    this.demand = 0;
    this.demandSince = now;
    // Enough for leaseMs of demand plus the round trip that brings the next lease.
    const cover = this.leaseMs + this.link.rttMs;
    const want = Math.min(this.maxLease, Math.max(1, Math.ceil(this.rate * cover)));
    this.lowWater = Math.ceil(want / 2);
    this.fetching = true;
    const ask = want + Math.ceil(this.debt);
    // A late reply is still counted: its units were taken from the fleet.
    this.send(ask, (reply) => this.granted(reply)).then(
      (reply) => {
        this.fetching = false;
        this.granted(reply);
      },
      () => {
        this.fetching = false;
      },
    );
  }

  /** Adds a `{ granted, waitMs }` reply to the stock; an absent reply (Redis away) adds nothing. */
  private granted(reply: unknown): void {
    if (!Array.isArray(reply)) return;
    this.fresh = false;
    const paid = Math.min(this.debt, Number(reply[0]));
    this.debt -= paid;
    const granted = Number(reply[0]) - paid;
    const now = this.link.settings.clock();
    if (granted > 0) {
      if (now - this.at > this.keepMs()) this.expire();
      this.stock += granted;
      this.at = now;
    }
    // The script says when asking again is worth it: 0 while the shared stock has tokens.
    this.nextAt = now + Number(reply[1]);
  }
}
