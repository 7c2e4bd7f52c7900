import { DeadlineExceededError, OperationAbortedError } from '@breakwater/core';
import { errorTypeOf } from '@breakwater/core/internal';
import { type Operation, TRPCClientError } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';

/**
 * The error a caller receives when Breakwater refused or ended the call: still
 * a `TRPCClientError`, with the core error as `cause`.
 * @internal
 */
export function refusal(cause: Error): TRPCClientError<AnyRouter> {
  return new TRPCClientError(cause.message, { cause });
}

/**
 * The error for a caller whose `op.signal` aborted: the reason when it is an
 * `Error`, else an `OperationAbortedError`, wrapped as a `TRPCClientError`.
 * @internal
 */
export function aborted(signal: AbortSignal): TRPCClientError<AnyRouter> {
  const reason: unknown = signal.reason;
  return refusal(
    reason instanceof Error
      ? reason
      : new OperationAbortedError(reason === undefined ? undefined : { cause: reason }),
  );
}

/**
 * The error of a call to `op` whose deadline of `ms` passed (`kind`: the
 * call's `timeout` or an `attempt timeout`), with a core `DeadlineExceededError` as cause.
 * @internal
 */
export function deadlineRefusal(
  op: Operation,
  ms: number,
  kind: string,
): TRPCClientError<AnyRouter> {
  return refusal(
    new DeadlineExceededError(ms, {
      message: `Deadline of ${ms} ms exceeded calling "${op.path}" (${kind})`,
    }),
  );
}

/** The bounded name of a tRPC failure: its tRPC error code (`INTERNAL_SERVER_ERROR`), else its name. @internal */
export function trpcErrorType(error: unknown): string {
  const code = (error as { data?: { code?: unknown } | null } | null)?.data?.code;
  // Only a code of the tRPC shape: a server cannot put free text into an attribute.
  return typeof code === 'string' && /^[A-Z_]{1,40}$/.test(code) ? code : errorTypeOf(error);
}
