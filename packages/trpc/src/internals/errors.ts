import { OperationAbortedError } from '@breakwater/core';
import { TRPCClientError } from '@trpc/client';
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
