import type { Operation, OperationLink, OperationResultObservable, TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';

/**
 * Runs `links` in order (first = outermost) as one link, so a composite
 * slots into `links: [...]` like any other.
 * @internal
 */
export function composeLinks<TRouter extends AnyRouter>(
  links: readonly TRPCLink<TRouter>[],
): TRPCLink<TRouter> {
  return (runtime) => {
    const ops: OperationLink<TRouter>[] = links.map((link) => link(runtime));
    return ({ op, next }) => {
      const call = (
        index: number,
        current: Operation,
      ): OperationResultObservable<TRouter, unknown> => {
        const link = ops[index];
        return link ? link({ op: current, next: (o) => call(index + 1, o) }) : next(current);
      };
      return call(0, op);
    };
  };
}
