import { createRetryBudget, type RetryBudget, type RetryBudgetOptions } from '@breakwater/core';
import type { RetryBudgetStats } from '@breakwater/core/types';
import { Lease } from './lease.js';
import {
  checkKeys,
  linkSettings,
  numberOption,
  RedisLink,
  type RedisLinkStats,
  type RedisSharedOptions,
  SHARED_KEYS,
  script,
} from './link.js';

/**
 * The fleet's sliding window in one hash: per slice slot `i<slot>` (the slice
 * it holds), `q<slot>` requests and `r<slot>` retries. One atomic step adds
 * this process's pending requests, gives back unused retries, and grants up to
 * `want` retries while retries < ratio × requests + reserve over the window.
 * KEYS[1] hash; ARGV sliceMs, slices, ratio, reserve, deposit, want, refund, lease ms.
 * Replies { granted, ms to wait when short, requests, retries }.
 * @internal
 */
export const BUDGET_STEP = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local sliceMs = tonumber(ARGV[1])
local slices = tonumber(ARGV[2])
local ratio = tonumber(ARGV[3])
local reserve = tonumber(ARGV[4])
local deposit = tonumber(ARGV[5])
local want = tonumber(ARGV[6])
local refund = tonumber(ARGV[7])
local cur = math.floor(now / sliceMs)
local slot = cur % slices
local fields = {}
for i = 0, slices - 1 do
  fields[#fields + 1] = 'i' .. i
  fields[#fields + 1] = 'q' .. i
  fields[#fields + 1] = 'r' .. i
end
local v = redis.call('HMGET', KEYS[1], unpack(fields))
local q, r, qcur, rcur = 0, 0, 0, 0
for i = 0, slices - 1 do
  local index = tonumber(v[i * 3 + 1])
  if index ~= nil and cur - index < slices and index <= cur then
    local qi = tonumber(v[i * 3 + 2]) or 0
    local ri = tonumber(v[i * 3 + 3]) or 0
    q = q + qi
    r = r + ri
    if index == cur then
      qcur = qi
      rcur = ri
    end
  end
end
local back = math.min(refund, rcur)
r = r - back
local granted = math.floor(reserve + ratio * (q + deposit) - r)
if granted > want then granted = want end
if granted < 0 then granted = 0 end
redis.call('HSET', KEYS[1], 'i' .. slot, cur, 'q' .. slot, qcur + deposit, 'r' .. slot, rcur - back + granted)
redis.call('PEXPIRE', KEYS[1], sliceMs * slices * 2)
local wait = 0
if granted < want then wait = math.min(sliceMs, tonumber(ARGV[8])) end
return { granted, wait, q + deposit, r + granted }
`;

/** Options of {@link createRedisRetryBudget}: core's budget options for the whole fleet, plus the link's. */
export interface RedisRetryBudgetOptions
  extends RedisSharedOptions,
    Omit<RetryBudgetOptions, 'clock'> {
  /**
   * Requests are counted locally and sent to Redis at most this often, in ms (> 0);
   * retries are leased like tokens (see `leaseMs`). Defaults to 100.
   */
  syncMs?: number;
  /** A retry lease covers this many ms of this process's recent retries (> 0). Defaults to 50. */
  leaseMs?: number;
  /** Most retries one lease takes, an integer >= 1. Defaults to 10. */
  maxLease?: number;
  /** Leased retries unused after this many ms are given back (> 0). Defaults to 1000. */
  leaseTtlMs?: number;
}

/** A fleet-wide {@link RetryBudget} kept in Redis. */
export interface RedisRetryBudget extends RetryBudget {
  /** Counters of the link to Redis (mode, round trips, fallbacks). */
  linkStats(): RedisLinkStats;
}

const BUDGET_KEYS = [
  ...SHARED_KEYS,
  'ratio',
  'minRetriesPerSecond',
  'ttlMs',
  'syncMs',
  'leaseMs',
  'maxLease',
  'leaseTtlMs',
];

/** Slices per window, as in core's budget. */
const SLICES = 10;

/**
 * Creates a retry budget shared by every process that uses the same Redis and
 * `name`: over the last `ttlMs`, the fleet's retries stay below `ratio` × the
 * fleet's requests + `minRetriesPerSecond` × `ttlMs` / 1000. Requests are
 * counted locally and sent in batches; retries are spent from a local lease;
 * so neither call waits on Redis. While Redis is down or slow, decisions
 * follow `fallback` (`'local'`: a core budget with `localShare` of the
 * minimum). Use it wherever core takes a `RetryBudget` (`budget` of `protect`,
 * the router and every adapter).
 * @example
 * const budget = createRedisRetryBudget({ client: redis, name: 'payments', ratio: 0.1 });
 */
export function createRedisRetryBudget(options: RedisRetryBudgetOptions): RedisRetryBudget {
  const fn = 'createRedisRetryBudget';
  checkKeys(fn, options, BUDGET_KEYS);
  const settings = linkSettings(fn, options);
  const ratio = numberOption(fn, 'ratio', options.ratio, 0.2, 0, { inclusive: true });
  const floor = numberOption(fn, 'minRetriesPerSecond', options.minRetriesPerSecond, 10, 0, {
    inclusive: true,
  });
  const ttlMs = numberOption(fn, 'ttlMs', options.ttlMs, 10_000, 0);
  const syncMs = numberOption(fn, 'syncMs', options.syncMs, 100, 0);
  const leaseMs = numberOption(fn, 'leaseMs', options.leaseMs, 50, 0);
  const maxLease = numberOption(fn, 'maxLease', options.maxLease, 10, 1, {
    inclusive: true,
    integer: true,
  });
  const leaseTtlMs = numberOption(fn, 'leaseTtlMs', options.leaseTtlMs, 1000, 0);
  const link = new RedisLink(settings);
  const step = script(BUDGET_STEP);
  const keys = [link.key('budget')];
  const clock = settings.clock;
  const reserve = (floor * ttlMs) / 1000;
  const sliceMs = Math.max(1, Math.round(ttlMs / SLICES));
  const local = createRetryBudget({
    ratio,
    minRetriesPerSecond: floor * settings.localShare,
    ttlMs,
    clock,
  });
  /** Requests recorded here and not yet sent. */
  let pending = 0;
  /** Leased retries that expired unused, to give back. */
  let refund = 0;
  let flushing = false;
  let flushAt = Number.NEGATIVE_INFINITY;
  /** The fleet's counts from the last reply. */
  let fleet: RetryBudgetStats = { requests: 0, retries: 0, available: 0 };

  const send = (want: number, late?: (reply: unknown) => void): Promise<unknown> => {
    const deposit = pending;
    const back = refund;
    pending = 0;
    refund = 0;
    return link
      .run(
        step,
        keys,
        [sliceMs, SLICES, ratio, reserve, deposit, want, back, leaseMs],
        undefined,
        late,
      )
      .then((reply) => {
        // Requests Redis did not count are dropped, not resent: that can only lower the budget.
        if (!Array.isArray(reply)) return reply;
        const requests = Number(reply[2]);
        const retries = Number(reply[3]);
        fleet = {
          requests,
          retries,
          available: Math.max(0, Math.floor(reserve + ratio * requests - retries)),
        };
        return reply;
      });
  };
  const lease = new Lease(link, leaseMs, maxLease, leaseTtlMs, send, (units) => {
    refund += units;
  });

  // Lease the first retries at once, so a retry soon after start-up is decided by the fleet.
  lease.refill(clock());

  const flush = (now: number): void => {
    if (flushing || !link.mayTry(now)) return;
    flushing = true;
    flushAt = now + syncMs;
    send(0).then(() => {
      flushing = false;
    });
  };

  /** Most retries owed to the fleet's window: its minimum. */
  const owedCap = Math.max(1, Math.ceil(reserve));
  /** A retry decided without Redis (`fallback`); one allowed is owed to the fleet's window. */
  const alone = (): boolean => {
    const mode = settings.fallback;
    const allowed = mode === 'local' ? local.tryRetry() : mode === 'open';
    if (allowed) lease.owe(1, owedCap);
    return allowed;
  };

  return {
    recordRequest() {
      pending++;
      local.recordRequest();
      const now = clock();
      if (now >= flushAt) flush(now);
    },
    tryRetry() {
      const now = clock();
      if (!link.shared) {
        lease.refill(now);
        return alone();
      }
      if (lease.take(1, now)) return true;
      return lease.fresh && alone();
    },
    stats() {
      return link.shared ? Object.assign({}, fleet) : local.stats();
    },
    linkStats: () => link.stats(),
  };
}
