import { checkOptions, keysOf, optionPath, optionTypeError } from '@breakwater/core/internal';
import type { TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { stackOf } from './resilience-link.js';

/** Options of {@link deadlineLink}. */
export interface DeadlineLinkOptions {
  /** Deadline of every query and mutation, in ms (> 0); per call, `context.timeoutMs` overrides it. Required. */
  timeoutMs: number;
}

/**
 * Gives each query and mutation a deadline (`timeoutMs` of `resilienceLink`)
 * and rejects the caller when it passes, with a `TRPCClientError` whose
 * `cause` is a core `DeadlineExceededError` — on time even inside
 * `httpBatchLink`, where the batch's HTTP request keeps going for the other
 * calls. A caller's `op.signal` abort also rejects at once. Subscriptions
 * are not given deadlines. Per call: `context: { timeoutMs }`.
 * @example
 * deadlineLink({ timeoutMs: 2_000 })
 */
export function deadlineLink<TRouter extends AnyRouter = AnyRouter>(
  options: DeadlineLinkOptions,
): TRPCLink<TRouter> {
  const timeoutMs = (options as Partial<DeadlineLinkOptions> | undefined)?.timeoutMs;
  if (timeoutMs === undefined) {
    throw optionTypeError('timeoutMs', 'is required (a number of ms)', 'deadlineLink');
  }
  optionPath('', () => checkOptions(undefined, options, DEADLINE_LINK_KEYS), 'deadlineLink');
  return stackOf('deadlineLink', { timeoutMs });
}

/** Keys of {@link DeadlineLinkOptions}. @internal */
export const DEADLINE_LINK_KEYS = keysOf<DeadlineLinkOptions>()(['timeoutMs']);
