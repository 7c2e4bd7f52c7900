import {
  checkOptions,
  createPool,
  type KnownKeys,
  optionPath,
  type Pool,
  type PoolOptions,
} from '@breakwater/core';
import type { TRPCClientError, TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import {
  type Observable,
  type Observer,
  observable,
  type Unsubscribable,
} from '@trpc/server/observable';
import { refusal } from './internals/errors.js';

/** Options of {@link bulkheadLink}. */
export interface BulkheadLinkOptions {
  /** A core pool (shareable) or its options (`concurrency`, `maxQueue`). */
  pool: Pool | PoolOptions;
  /** Let subscriptions hold a slot for their whole life. Defaults to false (they bypass the bulkhead). */
  subscriptions?: boolean;
}

/** Keys of {@link BulkheadLinkOptions}. @internal */
export const BULKHEAD_LINK_KEYS = {
  pool: true,
  subscriptions: true,
} as const satisfies KnownKeys<BulkheadLinkOptions>;

/**
 * Caps concurrent calls with a core pool: at most `concurrency` in flight,
 * up to `maxQueue` waiting in FIFO order; beyond that a call rejects with a
 * `TRPCClientError` whose `cause` is a core `QueueFullError`, and nothing is
 * sent. An aborted or unsubscribed queued call leaves the queue at once.
 * @example
 * bulkheadLink({ pool: { concurrency: 20, maxQueue: 100 } })
 */
export function bulkheadLink<TRouter extends AnyRouter = AnyRouter>(
  options: BulkheadLinkOptions,
): TRPCLink<TRouter> {
  // initialized config
  checkOptions('bulkheadLink', options, BULKHEAD_LINK_KEYS, '', false);
  const pool = optionPath('', () => resolvePool(options.pool), 'bulkheadLink');
  const subscriptions = options.subscriptions ?? false;

  return () => {
    // initialized in app
    return ({ op, next }) => {
      // initialized for request
      if (op.type === 'subscription' && !subscriptions) return next(op);
      return observable((observer) => {
        // Fast path: a free slot (so an empty queue) for a live call, taken at once — no
        // AbortController, pool promise or task (the pool would run the task at once too).
        if (!op.signal?.aborted && pool.tryTake()) {
          return inSlot(pool, next(op), observer);
        }
        let subscription: Unsubscribable | undefined;
        let finish: (() => void) | undefined;
        let torn = false;
        const ac = new AbortController();
        const signal = op.signal;
        const onAbort = () => ac.abort(signal?.reason);
        signal?.addEventListener('abort', onAbort, { once: true });
        const slot = (taskSignal: AbortSignal) =>
          new Promise<void>((resolve) => {
            // The slot is held until the call settles or is unsubscribed.
            finish = resolve;
            if (taskSignal.aborted) return resolve();
            subscription = next(op).subscribe({
              next: (envelope) => observer.next(envelope),
              error(error) {
                resolve();
                observer.error(error);
              },
              complete() {
                resolve();
                observer.complete();
              },
            });
          });
        pool.run(slot, { signal: ac.signal }).then(
          () => signal?.removeEventListener('abort', onAbort),
          (error: unknown) => {
            signal?.removeEventListener('abort', onAbort);
            // Queue full, or the caller aborted while queued; nobody listens after teardown.
            if (!torn) observer.error(refusal(error as Error) as TRPCClientError<TRouter>);
          },
        );
        return () => {
          torn = true;
          ac.abort();
          subscription?.unsubscribe();
          finish?.();
        };
      });
    };
  };
}

/** A pool given as one, or built from its options. @internal */
export function resolvePool(given: Pool | PoolOptions): Pool {
  return given && typeof (given as Pool).run === 'function'
    ? (given as Pool)
    : optionPath('pool', () => createPool(given as PoolOptions));
}

/**
 * Runs `source` in a slot already taken; the slot is given back (counted
 * completed, as the pool counts a slot task) at its error, completion or
 * teardown, whichever comes first.
 */
function inSlot<T, E>(
  slots: Pool,
  source: Observable<T, E>,
  observer: Observer<T, E>,
): Unsubscribable {
  const slot = new SlotCall(slots, observer);
  slot.subscription = source.subscribe(slot);
  return slot;
}

/** A call holding a slot: the observer below and the teardown, so a call allocates no closures. */
class SlotCall<T, E> implements Observer<T, E> {
  subscription: Unsubscribable | undefined = undefined;
  private held = true;

  constructor(
    private readonly slots: Pool,
    private readonly observer: Observer<T, E>,
  ) {}

  next(value: T): void {
    this.observer.next(value);
  }

  error(error: E): void {
    this.give();
    this.observer.error(error);
  }

  complete(): void {
    this.give();
    this.observer.complete();
  }

  unsubscribe(): void {
    this.subscription?.unsubscribe();
    this.give();
  }

  private give(): void {
    if (!this.held) return;
    this.held = false;
    this.slots.give(true);
  }
}
