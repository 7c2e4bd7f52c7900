import type { CircuitBreaker, CircuitBreakerOptions } from '../breaker/types.js';
import {
  checkOptions,
  describeValue,
  keysOf,
  optionPath,
  optionTypeError,
} from '../internal/validate.js';
import type { HedgePolicyOptions, RetryPolicyOptions } from './resilience-options.js';

/**
 * The settings one method (or service, or tRPC router) may change: the
 * per-call part of `ResilienceOptions`, plus `idempotent`. An adapter's
 * `methods` maps a selector to one of these; the most specific selector
 * matching a call wins, and its entry is merged over the client's options.
 * @example
 * resilienceInterceptor({
 *   retry: { attempts: 3 },
 *   methods: {
 *     'shop.Catalog': { timeoutMs: 2_000, idempotent: true },
 *     '/shop.Catalog/Export': { timeoutMs: 60_000, retry: false },
 *   },
 * });
 */
export interface MethodOptions {
  /** Deadline of the whole call, in ms (> 0), or `false` for none. Defaults to the client's. */
  timeoutMs?: number | false;
  /** Deadline of each attempt, in ms (> 0), or `false` for none. Defaults to the client's. */
  attemptTimeoutMs?: number | false;
  /** Retries, merged field by field over the client's (`backoff` is replaced whole); `false` turns them off. Defaults to the client's. */
  retry?: Omit<RetryPolicyOptions, 'onRetry'> | false;
  /** Hedging, merged field by field over the client's; `false` turns it off. Defaults to the client's. */
  hedge?: Partial<HedgePolicyOptions> | false;
  /** The method's circuit: breaker options merged field by field over the client's, a breaker of its own, or `false`. Defaults to the client's. */
  circuit?: CircuitBreaker | CircuitBreakerOptions | false;
  /** Whether calls of the method are safe to repeat; replaces the client's `idempotent` for them. Defaults to the client's. */
  idempotent?: boolean;
}

/** Keys of {@link MethodOptions}. @internal */
export const METHOD_OPTION_KEYS = keysOf<MethodOptions>()([
  'timeoutMs',
  'attemptTimeoutMs',
  'retry',
  'hedge',
  'circuit',
  'idempotent',
]);

const METHOD_RETRY_KEYS = keysOf<Omit<RetryPolicyOptions, 'onRetry'>>()([
  'attempts',
  'backoff',
  'maxPushbackMs',
]);

/**
 * The selectors one framework's `methods` accepts, and which of them a call
 * matches. @internal
 */
export interface MethodSelectorForm {
  /** Why `key` can match no call, or `undefined` when it can. */
  fault(key: string): string | undefined;
  /** The selectors that match a call to `path`, most specific first. */
  candidates(path: string): readonly string[];
}

/**
 * tRPC's selectors: a procedure path (`greet`, `user.get`) or a router and
 * everything under it (`user.*`); a longer prefix is more specific.
 * @internal
 */
export const PROCEDURE_SELECTORS: MethodSelectorForm = {
  fault(key) {
    const path = key.endsWith('.*') ? key.slice(0, -2) : key;
    if (path !== '' && path.split('.').every((part) => part !== '' && !/[*/\s]/.test(part))) {
      return undefined;
    }
    return `is ${describeValue(key)}, which matches no procedure: give a procedure path ('greet', 'user.get') or a router prefix ('user.*')`;
  },
  candidates(path) {
    const found = [path];
    for (let end = path.lastIndexOf('.'); end > 0; end = path.lastIndexOf('.', end - 1)) {
      found.push(`${path.slice(0, end)}.*`);
    }
    return found;
  },
};

/** One `methods` entry, merged over the client's options. @internal */
export interface MethodEntry<O> {
  /** The selector as written. */
  readonly key: string;
  /** Its option path, `methods["key"]`, for errors found while building its stack. */
  readonly path: string;
  /** The client's options (without `methods` and `idempotent`) with the entry merged over them. */
  readonly options: O;
  /** The entry's `idempotent`, when it gives one. */
  readonly idempotent: boolean | undefined;
}

/** The entry's options with its `idempotent` (when it gives one) for the adapter's own rule. @internal */
export function entryOptions<O>(entry: MethodEntry<O>): O {
  return entry.idempotent === undefined
    ? entry.options
    : { ...entry.options, idempotent: entry.idempotent };
}

/** The `methods` of a client, and which entry a call uses. @internal */
export interface MethodTable<O> {
  readonly entries: readonly MethodEntry<O>[];
  /** The entry of the most specific selector matching `path`, or `undefined` for the client's own options. */
  entryFor(path: string): MethodEntry<O> | undefined;
}

function isBreaker(value: unknown): boolean {
  return typeof (value as Partial<CircuitBreaker> | undefined)?.tryAcquire === 'function';
}

/** `entry` over `client`, one level deep: an object over an object merges field by field. */
function mergePart(client: unknown, entry: unknown): unknown {
  if (entry === undefined) return client;
  const plain = (v: unknown) => typeof v === 'object' && v !== null && !isBreaker(v);
  return plain(client) && plain(entry) ? { ...(client as object), ...(entry as object) } : entry;
}

/**
 * The client's options `client` with method entry `entry` merged over them:
 * durations replace; `retry`, `hedge` and `circuit` options merge field by
 * field over the client's (a breaker given, or `false`, replaces).
 * @internal
 */
export function mergeMethodOptions<O extends object>(client: O, entry: MethodOptions): O {
  const merged: Record<string, unknown> = { ...(client as Record<string, unknown>) };
  for (const key of ['timeoutMs', 'attemptTimeoutMs', 'retry', 'hedge', 'circuit'] as const) {
    const value = mergePart(merged[key], entry[key]);
    if (value !== undefined) merged[key] = value;
  }
  return merged as O;
}

/**
 * Checks `methods` of factory `fn` (each selector against `form`, each entry
 * against {@link MethodOptions}, errors naming `methods["key"]…`) and merges
 * each entry over `client`, then `shared` over that (the parts every method
 * shares, such as the client's retry budget). `undefined` is an empty table.
 * @internal
 */
export function resolveMethods<O extends object>(
  fn: string,
  methods: unknown,
  form: MethodSelectorForm,
  client: O,
  shared: Partial<O> = {},
): MethodTable<O> {
  if (methods === undefined) return { entries: [], entryFor: () => undefined };
  if (typeof methods !== 'object' || methods === null || Array.isArray(methods)) {
    throw optionTypeError(
      'methods',
      `must be an object of method selectors to method options, got ${describeValue(methods)}`,
      fn,
    );
  }
  const byKey = new Map<string, MethodEntry<O>>();
  for (const [key, entry] of Object.entries(methods)) {
    const path = `methods[${JSON.stringify(key)}]`;
    const fault = form.fault(key);
    if (fault !== undefined) throw optionTypeError(path, fault, fn);
    optionPath(
      path,
      () => {
        checkOptions(undefined, entry, METHOD_OPTION_KEYS, '', false);
        const { retry, idempotent } = entry as MethodOptions;
        if (typeof retry === 'object' && retry !== null) {
          checkOptions(undefined, retry, METHOD_RETRY_KEYS, 'retry');
        }
        if (idempotent !== undefined && typeof idempotent !== 'boolean') {
          throw optionTypeError(
            'idempotent',
            `must be a boolean, got ${describeValue(idempotent)}`,
          );
        }
      },
      fn,
    );
    const given = entry as MethodOptions;
    byKey.set(key, {
      key,
      path,
      options: { ...mergeMethodOptions(client, given), ...shared },
      idempotent: given.idempotent,
    });
  }
  const chosen = new Map<string, MethodEntry<O> | undefined>();
  return {
    entries: [...byKey.values()],
    entryFor(path) {
      if (chosen.has(path)) return chosen.get(path);
      let entry: MethodEntry<O> | undefined;
      for (const key of form.candidates(path)) {
        entry = byKey.get(key);
        if (entry !== undefined) break;
      }
      chosen.set(path, entry);
      return entry;
    },
  };
}
