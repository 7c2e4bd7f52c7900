import { type RandomSource, type Sleep, systemSleep } from '@breakwater/core/time';
import type { LatencySpec } from '../grpc/faults.js';
import { seededRandom } from '../grpc/seeded-random.js';
import { checkRange } from '../scenario/check.js';
import { checkLatency, drawLatency } from '../trpc/latency.js';

/** Options every client-side chaos piece shares. */
export interface ClientChaosOptions {
  /** Share of calls failed before they reach the network, in [0, 1]. Defaults to 0. */
  errorRate?: number;
  /** Latency added to calls (fixed, uniform, or a long tail). Defaults to none. */
  latency?: LatencySpec;
  /** Share of calls that get `latency`, in [0, 1]. Defaults to 1. */
  latencyRate?: number;
  /** Method names, full method paths or tRPC procedure paths affected. Defaults to every call. */
  methods?: readonly string[];
  /** Checked per call; chaos is skipped while it returns false (a kill switch). Defaults to always on. */
  enabled?: () => boolean;
  /** Seed of the default random source, so a run replays. Defaults to 1. */
  seed?: number;
  /** Randomness for rates and latency draws; overrides `seed`. Defaults to `seededRandom(seed)`. */
  random?: RandomSource;
  /** How injected latency is waited for. Defaults to `systemSleep`. */
  sleep?: Sleep;
}

/** What chaos does to one call. @internal */
export interface ChaosPlan {
  delayMs: number;
  fail: boolean;
}

/** A validated per-call decision function. @internal */
export interface ChaosPlanner {
  /** The plan for a call to `path` (`/pkg.Service/Method` or a tRPC path); `undefined` = untouched. */
  plan(path: string): ChaosPlan | undefined;
  sleep: Sleep;
}

function affected(methods: readonly string[] | undefined, path: string): boolean {
  if (methods === undefined) return true;
  if (methods.includes(path)) return true;
  return methods.includes(path.slice(path.lastIndexOf('/') + 1));
}

/** Validates the shared options and returns the per-call planner. @internal */
export function createChaosPlanner(options: ClientChaosOptions): ChaosPlanner {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`options must be an object, got ${String(options)}`);
  }
  const errorRate = checkRange('errorRate', options.errorRate ?? 0, 0, 1);
  const latencyRate = checkRange('latencyRate', options.latencyRate ?? 1, 0, 1);
  const latency = options.latency;
  if (latency !== undefined) checkLatency('latency', latency);
  if (options.methods !== undefined && !Array.isArray(options.methods)) {
    throw new TypeError('methods must be an array of strings');
  }
  const random = options.random ?? seededRandom(options.seed ?? 1);
  const enabled = options.enabled;
  return {
    sleep: options.sleep ?? systemSleep,
    plan(path) {
      if (enabled !== undefined && !enabled()) return undefined;
      if (!affected(options.methods, path)) return undefined;
      const delayMs =
        latency !== undefined && (latencyRate >= 1 || random() < latencyRate)
          ? drawLatency(latency, random)
          : 0;
      const fail = errorRate > 0 && random() < errorRate;
      return delayMs > 0 || fail ? { delayMs, fail } : undefined;
    },
  };
}
