import type { HedgePolicyOptions } from '../attempts/resilience-options.js';
import {
  checkOptions,
  describeValue,
  optionRangeError,
  optionTypeError,
} from '../internal/validate.js';
import type { BackoffOptions } from '../retry/backoff.js';
import { GrpcStatus } from './status.js';

/** A `retryPolicy` as Breakwater retry options: its attempts and gRPC's backoff. */
export interface ServiceConfigRetry {
  /** `maxAttempts`, at most 5 (gRFC A6). */
  attempts: number;
  /** `initialBackoff` → `baseDelayMs`, `maxBackoff` → `maxDelayMs`, `backoffMultiplier` → `factor`: exponential, with gRPC's ±20 % (`proportional`) jitter. */
  backoff: BackoffOptions;
}

/** One `methodConfig` entry, validated. @internal */
export interface ServiceConfigEntry {
  timeoutMs?: number;
  retry?: ServiceConfigRetry;
  hedge?: HedgePolicyOptions;
  /** The statuses retried (`retryableStatusCodes`) or survived by a hedge (`nonFatalStatusCodes`); `undefined` without a policy. */
  codes?: ReadonlySet<number>;
}

/** A service config, validated. @internal */
export interface ParsedServiceConfig {
  /** The entry named `{}`: the client's default. */
  fallback: ServiceConfigEntry | undefined;
  /** Entries by method path (`/pkg.Service/Method`) or service (`pkg.Service`). */
  methods: ReadonlyMap<string, ServiceConfigEntry>;
  /** The entry A6 picks for method `path`: its own, else its service's, else the default. */
  entryFor(path: string): ServiceConfigEntry | undefined;
  throttling: { maxTokens: number; tokenRatio: number } | undefined;
  /** JSON paths of the fields Breakwater does not apply, with why when it is not plain. */
  notApplied: string[];
}

const FN = 'fromServiceConfig';

// Every field gRFC A6 and the service config spec define: anything else is a typo.
const TOP_KEYS = {
  methodConfig: true,
  retryThrottling: true,
  loadBalancingConfig: true,
  loadBalancingPolicy: true,
  healthCheckConfig: true,
} as const;
const METHOD_KEYS = {
  name: true,
  timeout: true,
  retryPolicy: true,
  hedgingPolicy: true,
  waitForReady: true,
  maxRequestMessageBytes: true,
  maxResponseMessageBytes: true,
  // grpc-js's spelling of the two above.
  maxRequestBytes: true,
  maxResponseBytes: true,
} as const;
const RETRY_KEYS = {
  maxAttempts: true,
  initialBackoff: true,
  maxBackoff: true,
  backoffMultiplier: true,
  retryableStatusCodes: true,
  perAttemptRecvTimeout: true,
} as const;
const HEDGE_KEYS = { maxAttempts: true, hedgingDelay: true, nonFatalStatusCodes: true } as const;
const THROTTLING_KEYS = { maxTokens: true, tokenRatio: true } as const;
const NAME_KEYS = { service: true, method: true } as const;

/** The channel's fields: grpc-js applies them when given the JSON too. */
const CHANNEL_TOP = ['loadBalancingConfig', 'loadBalancingPolicy', 'healthCheckConfig'] as const;
const CHANNEL_METHOD = [
  'waitForReady',
  'maxRequestMessageBytes',
  'maxResponseMessageBytes',
  'maxRequestBytes',
  'maxResponseBytes',
] as const;

/** A6: `maxAttempts` above this counts as this, without being an error. */
const MAX_ATTEMPTS = 5;

/** proto3 JSON Duration as A6 uses it: seconds with up to 9 decimals, then `s`. */
const DURATION = /^\d+(\.\d{1,9})?s$/;

type Json = Record<string, unknown>;

function object(path: string, value: unknown, known: Readonly<Record<string, true>>): Json {
  checkOptions(FN, value, known, path, false);
  return value as Json;
}

function array(path: string, value: unknown): unknown[] {
  if (!Array.isArray(value)) {
    throw optionTypeError(path, `must be an array, got ${describeValue(value)}`, FN);
  }
  return value;
}

/** A duration in ms: `"1.5s"`, or `{ seconds, nanos }` where grpc-js takes that too. */
function durationMs(path: string, value: unknown, allowObject = false): number {
  if (typeof value === 'string' && DURATION.test(value)) return Number(value.slice(0, -1)) * 1_000;
  if (allowObject && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const { seconds, nanos } = object(path, value, { seconds: true, nanos: true }) as {
      seconds?: unknown;
      nanos?: unknown;
    };
    if (Number.isInteger(seconds) && Number.isInteger(nanos ?? 0)) {
      return (seconds as number) * 1_000 + ((nanos as number | undefined) ?? 0) / 1e6;
    }
  }
  throw optionTypeError(
    path,
    `must be a duration in seconds ending in 's', such as "1.5s", got ${describeValue(value)}`,
    FN,
  );
}

function attempts(path: string, value: unknown, notApplied: string[]): number {
  if (!Number.isInteger(value) || (value as number) < 2) {
    throw optionRangeError(path, `must be an integer >= 2, got ${describeValue(value)}`, FN);
  }
  if ((value as number) <= MAX_ATTEMPTS) return value as number;
  notApplied.push(`${path} above ${MAX_ATTEMPTS} (counted as ${MAX_ATTEMPTS}, as grpc-js does)`);
  return MAX_ATTEMPTS;
}

const STATUS_NUMBERS = new Set<number>(Object.values(GrpcStatus));

/** Status codes given as numbers or case-insensitive names (`14`, `"UNAVAILABLE"`, `"unavailable"`). */
function statusCodes(path: string, value: unknown): Set<number> {
  const codes = new Set<number>();
  array(path, value).forEach((code, i) => {
    const named =
      typeof code === 'string'
        ? (GrpcStatus as Record<string, number | undefined>)[code.toUpperCase()]
        : undefined;
    const number = typeof code === 'number' && STATUS_NUMBERS.has(code) ? code : named;
    if (number === undefined) {
      throw optionTypeError(
        `${path}[${i}]`,
        `must be a gRPC status code (0–16) or its name, such as "UNAVAILABLE", got ${describeValue(code)}`,
        FN,
      );
    }
    codes.add(number);
  });
  return codes;
}

function retryPolicy(path: string, value: unknown, notApplied: string[]): ServiceConfigEntry {
  const o = object(path, value, RETRY_KEYS);
  const multiplier = o.backoffMultiplier;
  if (typeof multiplier !== 'number' || !(multiplier >= 1) || multiplier === Infinity) {
    throw optionRangeError(
      `${path}.backoffMultiplier`,
      `must be a number >= 1 (a backoff that shrinks is not supported), got ${describeValue(multiplier)}`,
      FN,
    );
  }
  const codes = statusCodes(`${path}.retryableStatusCodes`, o.retryableStatusCodes);
  if (codes.size === 0) {
    throw optionRangeError(`${path}.retryableStatusCodes`, 'must list at least one status', FN);
  }
  if (o.perAttemptRecvTimeout !== undefined) notApplied.push(`${path}.perAttemptRecvTimeout`);
  const retry: ServiceConfigRetry = {
    attempts: attempts(`${path}.maxAttempts`, o.maxAttempts, notApplied),
    backoff: {
      baseDelayMs: durationMs(`${path}.initialBackoff`, o.initialBackoff),
      maxDelayMs: durationMs(`${path}.maxBackoff`, o.maxBackoff),
      factor: multiplier,
      strategy: 'exponential',
      jitter: 'proportional',
    },
  };
  return { retry, codes };
}

function hedgingPolicy(path: string, value: unknown, notApplied: string[]): ServiceConfigEntry {
  const o = object(path, value, HEDGE_KEYS);
  const hedge: HedgePolicyOptions = {
    attempts: attempts(`${path}.maxAttempts`, o.maxAttempts, notApplied),
    delayMs: o.hedgingDelay === undefined ? 0 : durationMs(`${path}.hedgingDelay`, o.hedgingDelay),
  };
  const codes =
    o.nonFatalStatusCodes === undefined
      ? new Set<number>()
      : statusCodes(`${path}.nonFatalStatusCodes`, o.nonFatalStatusCodes);
  return { hedge, codes };
}

function methodEntry(path: string, o: Json, notApplied: string[]): ServiceConfigEntry {
  for (const key of CHANNEL_METHOD) if (o[key] !== undefined) notApplied.push(`${path}.${key}`);
  if (o.retryPolicy !== undefined && o.hedgingPolicy !== undefined) {
    throw optionTypeError(path, 'has both retryPolicy and hedgingPolicy: give one', FN);
  }
  const entry: ServiceConfigEntry =
    o.retryPolicy !== undefined
      ? retryPolicy(`${path}.retryPolicy`, o.retryPolicy, notApplied)
      : o.hedgingPolicy !== undefined
        ? hedgingPolicy(`${path}.hedgingPolicy`, o.hedgingPolicy, notApplied)
        : {};
  if (o.timeout !== undefined) {
    const ms = durationMs(`${path}.timeout`, o.timeout, true);
    if (!(ms > 0)) throw optionRangeError(`${path}.timeout`, 'must be above 0s', FN);
    entry.timeoutMs = ms;
  }
  return entry;
}

/** `''` for the default, `pkg.Service` for a service, `/pkg.Service/Method` for a method. */
function nameKey(path: string, value: unknown): string {
  const { service, method } = object(path, value, NAME_KEYS);
  // A6: an unset or empty field is the same.
  if (service !== undefined && typeof service !== 'string') {
    throw optionTypeError(`${path}.service`, `must be a string, got ${describeValue(service)}`, FN);
  }
  if (method !== undefined && typeof method !== 'string') {
    throw optionTypeError(`${path}.method`, `must be a string, got ${describeValue(method)}`, FN);
  }
  if (!service) {
    if (method) throw optionTypeError(`${path}.method`, 'is set without a service', FN);
    return '';
  }
  if (method) return `/${service}/${method}`;
  if (!service.includes('.') || service.startsWith('.') || service.endsWith('.')) {
    throw optionTypeError(
      `${path}.service`,
      `is ${describeValue(service)}: a whole service is selected by its package-qualified name ('pkg.Service'); name its methods ({ service, method }) instead`,
      FN,
    );
  }
  return service;
}

/** Validates a parsed service config (gRFC A6, grpc-js's reading of it). @internal */
export function parseServiceConfig(value: unknown): ParsedServiceConfig {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw optionTypeError(
      'json',
      `must be a service config object, got ${describeValue(value)}`,
      FN,
    );
  }
  const top = object('', value, TOP_KEYS);
  const notApplied: string[] = CHANNEL_TOP.filter((key) => top[key] !== undefined);
  let fallback: ServiceConfigEntry | undefined;
  const methods = new Map<string, ServiceConfigEntry>();
  const namedAt = new Map<string, string>();
  const configs = top.methodConfig === undefined ? [] : array('methodConfig', top.methodConfig);
  configs.forEach((config, i) => {
    const path = `methodConfig[${i}]`;
    const o = object(path, config, METHOD_KEYS);
    const entry = methodEntry(path, o, notApplied);
    array(`${path}.name`, o.name).forEach((name, j) => {
      const at = `${path}.name[${j}]`;
      const key = nameKey(at, name);
      const first = namedAt.get(key);
      if (first !== undefined) {
        throw optionTypeError(
          at,
          `names ${describeValue(key || '{}')} again (first at ${first})`,
          FN,
        );
      }
      namedAt.set(key, at);
      if (key === '') fallback = entry;
      else methods.set(key, entry);
    });
  });
  let throttling: ParsedServiceConfig['throttling'];
  if (top.retryThrottling !== undefined) {
    const o = object('retryThrottling', top.retryThrottling, THROTTLING_KEYS);
    const { maxTokens, tokenRatio } = o;
    if (typeof maxTokens !== 'number' || !(maxTokens > 0 && maxTokens <= 1_000)) {
      throw optionRangeError(
        'retryThrottling.maxTokens',
        `must be a number in (0, 1000], got ${describeValue(maxTokens)}`,
        FN,
      );
    }
    if (typeof tokenRatio !== 'number' || !(tokenRatio > 0) || tokenRatio === Infinity) {
      throw optionRangeError(
        'retryThrottling.tokenRatio',
        `must be a number > 0, got ${describeValue(tokenRatio)}`,
        FN,
      );
    }
    // A6: decimal places beyond 3 are ignored.
    throttling = { maxTokens, tokenRatio: Math.trunc(tokenRatio * 1_000) / 1_000 };
  }
  const entryFor = (path: string) =>
    methods.get(path) ?? methods.get(path.slice(1, path.lastIndexOf('/'))) ?? fallback;
  return { fallback, methods, entryFor, throttling, notApplied };
}
