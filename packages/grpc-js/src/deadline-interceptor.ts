import {
  type Clock,
  checkOptions,
  type Duration,
  type KnownKeys,
  optionPath,
  parseDuration,
  systemClock,
} from '@breakwater/core';
import type { Interceptor } from '@grpc/grpc-js';
import { DeadlineCall } from './internals/deadline-call.js';
import { type Stage, stageInterceptor } from './internals/stage.js';

/** Options of {@link deadlineInterceptor}. */
export interface DeadlineInterceptorOptions {
  /** Time budget of every call without a per-method one. Defaults to none (calls keep the caller's deadline). */
  timeout?: Duration;
  /** Budgets by full method path (`/pkg.Service/Method`) or service (`pkg.Service`). Defaults to none. */
  methods?: Readonly<Record<string, Duration>>;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
}

/** Keys of {@link DeadlineInterceptorOptions}. @internal */
export const DEADLINE_KEYS = {
  timeout: true,
  methods: true,
  clock: true,
} as const satisfies KnownKeys<DeadlineInterceptorOptions>;

/**
 * Gives calls a deadline from a per-method or default budget; a deadline the
 * caller set that is earlier wins, so a call never gets more time than its
 * caller allowed. grpc-js sends it to the server as `grpc-timeout`, and the
 * retry interceptor below keeps the same absolute deadline for every attempt.
 * When it runs out — grpc-js's timer or the server's, whichever fires first —
 * the call fails `DEADLINE_EXCEEDED` with the core `DeadlineExceededError` as
 * `cause` (see `breakwaterCause`), as in `@breakwater/nice-grpc`.
 */
export function deadlineInterceptor(options: DeadlineInterceptorOptions = {}): Interceptor {
  return stageInterceptor([deadlineStage(options)]);
}

function parseDeadlines(options: DeadlineInterceptorOptions) {
  checkOptions(undefined, options, DEADLINE_KEYS, '', false);
  const fallback =
    options.timeout === undefined ? undefined : parseDuration('timeout', options.timeout);
  const budgets = new Map<string, number>();
  for (const [key, value] of Object.entries(options.methods ?? {})) {
    budgets.set(key, parseDuration(`methods["${key}"]`, value));
  }
  return { fallback, budgets };
}

/** The stage of {@link deadlineInterceptor}. @internal */
export function deadlineStage(options: DeadlineInterceptorOptions): Stage {
  const { fallback, budgets } = optionPath(
    '',
    () => parseDeadlines(options),
    'deadlineInterceptor',
  );
  const clock = options.clock ?? systemClock;
  const resolved = new Map<string, number | undefined>();
  const budgetFor = (path: string): number | undefined => {
    if (resolved.has(path)) return resolved.get(path);
    const budget =
      budgets.get(path) ?? budgets.get(path.slice(1, path.lastIndexOf('/'))) ?? fallback;
    resolved.set(path, budget);
    return budget;
  };
  return {
    intercept(callOptions, chain, index, final) {
      const budget = budgetFor(callOptions.method_definition.path);
      if (budget === undefined) return chain.next(callOptions, index, final);
      const now = clock();
      const at = now + budget;
      const caller = callOptions.deadline;
      const callerMs =
        caller === undefined
          ? Number.POSITIVE_INFINITY
          : caller instanceof Date
            ? caller.getTime()
            : caller;
      if (callerMs <= at) {
        return new DeadlineCall(chain.next(callOptions, index, final), Math.max(0, callerMs - now));
      }
      // Object.assign, not `{ ...callOptions, deadline }`: Node 20's V8 takes a slow path
      // (about 1 µs per key) to add a key the spread source lacks to a spread copy.
      const down = Object.assign({}, callOptions, { deadline: at });
      return new DeadlineCall(chain.next(down, index, final), budget);
    },
  };
}
