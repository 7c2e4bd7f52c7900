import type { HedgePolicyOptions } from '../attempts/resilience-options.js';
import { checkOptions, describeValue, optionTypeError } from '../internal/validate.js';
import { type ResilienceWarning, reportWarning } from '../internal/warning.js';
import type { RetryBudgetOptions } from '../retry/budget.js';
import {
  createGrpcStatusClassifier,
  type GrpcStatusClassifier,
  parsePushback,
} from './classifier.js';
import {
  parseServiceConfig,
  type ServiceConfigEntry,
  type ServiceConfigRetry,
} from './service-config-parse.js';

export type { ServiceConfigRetry };

/** One `methodConfig` entry for a method or service, complete: A6 lets it replace, never merge with, a wider entry. */
export interface ServiceConfigMethodOptions {
  /** `timeout`, or `false` when the entry has none (A6: no deadline). */
  timeoutMs: number | false;
  /** `retryPolicy`; left out without one, so only calls that never left are retried. */
  retry?: ServiceConfigRetry;
  /** `hedgingPolicy`, or `false` without one. */
  hedge: HedgePolicyOptions | false;
  /** `true` when the entry has a `retryPolicy` or `hedgingPolicy`: grpc-js repeats any such method. */
  idempotent: boolean;
}

/** What {@link fromServiceConfig} returns: options for `resilienceInterceptor` or `resilienceMiddleware` (and the per-method `methods`). */
export interface ServiceConfigOptions {
  /** The default entry's `timeout`, or `false` without one (A6: no deadline). */
  timeoutMs: number | false;
  /** Always `false`: A6 has no per-attempt deadline, each attempt runs until the call's. */
  attemptTimeoutMs: false;
  /** The default entry's `retryPolicy`; left out without one. */
  retry?: ServiceConfigRetry;
  /** The default entry's `hedgingPolicy`; left out without one. */
  hedge?: HedgePolicyOptions;
  /** `retryThrottling` as the closest retry budget; left out without it (the standard budget applies). */
  budget?: RetryBudgetOptions;
  /** `'all'` when the default entry has a `retryPolicy` or `hedgingPolicy`. */
  idempotent?: 'all';
  /** `retryableStatusCodes` / `nonFatalStatusCodes` of the entry that covers each method. */
  classify: GrpcStatusClassifier;
  /** The entries for a method (`'/pkg.Service/Method'`) or a service (`'pkg.Service'`); left out when there are none. */
  methods?: Record<string, ServiceConfigMethodOptions>;
}

/** Options of {@link fromServiceConfig}. */
export interface FromServiceConfigOptions {
  /** Told once of the fields Breakwater does not apply; a throwing listener is ignored. Defaults to a Node process warning, printed once per process. */
  onWarning?: (warning: ResilienceWarning) => void;
}

const FN = 'fromServiceConfig';
/** The window over which a budget made from `retryThrottling` counts. */
const THROTTLING_TTL_MS = 10_000;

/**
 * Turns a grpc-js / gRFC A6 service config (the JSON, or its parsed object)
 * into Breakwater options, so that `resilienceInterceptor(fromServiceConfig(json))`
 * repeats calls as grpc-js would with `'grpc.service_config': json`:
 *
 * - a `methodConfig` entry whose `name` is `{}` or `[{}]` is the client
 *   default (the top-level options); `{ service }` and `{ service, method }`
 *   entries become `methods['pkg.Service']` and `methods['/pkg.Service/Method']`,
 *   each complete, as A6 picks the narrowest entry and never merges them;
 * - `timeout` → `timeoutMs` (absent: no deadline); `attemptTimeoutMs: false`;
 * - `retryPolicy` → `retry` (`maxAttempts` above 5 counts as 5, as in A6),
 *   `hedgingPolicy` → `hedge` (`hedgingDelay` → `delayMs`, default 0);
 * - an entry with either policy marks its methods **idempotent**: grpc-js
 *   repeats any method with a policy, so a policy in the config is the
 *   declaration that the methods are safe to repeat;
 * - `retryableStatusCodes` (`nonFatalStatusCodes` when hedging) decide which
 *   statuses are retried, through `classify`: the listed ones and nothing
 *   else, except a call that provably never left (grpc-js's transparent
 *   retry); a `grpc-retry-pushback-ms` trailer still replaces the backoff;
 * - `retryThrottling` → `budget: { ratio: tokenRatio, minRetriesPerSecond: maxTokens / 20, ttlMs: 10 000 }`.
 *   The two differ: grpc-js keeps a token count that every failed attempt
 *   lowers by 1 and every success raises by `tokenRatio`, and stops retrying
 *   below `maxTokens / 2` until successes refill it; the budget lets through
 *   `tokenRatio` retries per call plus `maxTokens / 2` per 10 s window, and
 *   forgets after the window.
 *
 * `waitForReady`, message-size limits, `loadBalancingConfig` and
 * `healthCheckConfig` belong to the channel: they are named in one warning;
 * give grpc-js the same JSON as `'grpc.service_config'` next to
 * `disableGrpcRetries` and it applies them. A field A6 does not define is a
 * `TypeError`, as is any invalid value, naming its JSON path
 * (`methodConfig[0].retryPolicy.maxAttempts`). Parts the config does not speak
 * of (circuit, concurrency) keep the interceptor's standard. grpc-js 1.14
 * reads a fractional `timeout` such as `"1.5s"` as 1 s and 5 ns; this reads
 * it as 1.5 s, as proto3 JSON defines it.
 * @example
 * const client = new Greeter(address, credentials.createInsecure(), {
 *   ...disableGrpcRetries,
 *   interceptors: [resilienceInterceptor(fromServiceConfig(readFileSync('service-config.json', 'utf8')))],
 * });
 */
export function fromServiceConfig(
  json: string | object,
  options: FromServiceConfigOptions = {},
): ServiceConfigOptions {
  checkOptions(FN, options, { onWarning: true }, '', false);
  if (options.onWarning !== undefined && typeof options.onWarning !== 'function') {
    throw optionTypeError(
      'onWarning',
      `must be a function, got ${describeValue(options.onWarning)}`,
      FN,
    );
  }
  const config = parseServiceConfig(parsed(json));
  if (config.notApplied.length > 0) {
    reportWarning(options.onWarning, {
      code: 'service-config-not-applied',
      message: `${FN}: Breakwater does not apply ${config.notApplied.join(', ')}; waitForReady, message sizes, load balancing and health checks are the channel's: give grpc-js the same JSON as 'grpc.service_config' next to disableGrpcRetries.`,
    });
  }
  const fallback = config.fallback;
  const result: ServiceConfigOptions = {
    timeoutMs: fallback?.timeoutMs ?? false,
    attemptTimeoutMs: false,
    classify: classifierFor(config.entryFor),
  };
  if (fallback?.retry !== undefined) result.retry = fallback.retry;
  if (fallback?.hedge !== undefined) result.hedge = fallback.hedge;
  if (fallback?.codes !== undefined) result.idempotent = 'all';
  if (config.throttling !== undefined) {
    const { maxTokens, tokenRatio } = config.throttling;
    result.budget = {
      ratio: tokenRatio,
      minRetriesPerSecond: maxTokens / 2 / (THROTTLING_TTL_MS / 1_000),
      ttlMs: THROTTLING_TTL_MS,
    };
  }
  if (config.methods.size > 0) {
    result.methods = {};
    for (const [key, entry] of config.methods) result.methods[key] = methodOptions(entry);
  }
  return result;
}

function parsed(json: string | object): unknown {
  if (typeof json !== 'string') return json;
  try {
    return JSON.parse(json);
  } catch (error) {
    throw optionTypeError('json', `is not valid JSON: ${(error as Error).message}`, FN);
  }
}

function methodOptions(entry: ServiceConfigEntry): ServiceConfigMethodOptions {
  const options: ServiceConfigMethodOptions = {
    timeoutMs: entry.timeoutMs ?? false,
    hedge: entry.hedge ?? false,
    idempotent: entry.codes !== undefined,
  };
  if (entry.retry !== undefined) options.retry = entry.retry;
  return options;
}

/** The listed codes of the entry covering each method are retried (or survive a hedge), no others. */
function classifierFor(
  entryFor: (path: string) => ServiceConfigEntry | undefined,
): GrpcStatusClassifier {
  return createGrpcStatusClassifier({
    override: (input, verdict) => {
      const codes = entryFor(input.path)?.codes;
      // A request that never left, or the caller's own cancel, is judged as always.
      if (codes === undefined || verdict.neverSent || input.cancelledByCaller) return verdict;
      if (!codes.has(input.code)) return verdict.retry ? { ...verdict, retry: false } : verdict;
      const pushback = parsePushback(input.trailer);
      return pushback === undefined
        ? { ...verdict, retry: true }
        : { ...verdict, retry: true, retryAfterMs: pushback };
    },
  });
}
