import {
  type ConcurrencyLimitError,
  DeadlineExceededError,
  OperationAbortedError,
} from '@breakwater/core';
import { errorTypeOf } from '@breakwater/core/internal';
import { type Operation, TRPCClientError } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';

/**
 * The error a caller receives when Breakwater refused or ended the call: still
 * a `TRPCClientError`, with the core error as `cause`.
 * @internal
 */
export function refusal(cause: Error): TRPCClientError<AnyRouter> {
  return new TRPCClientError(cause.message, { cause });
}

/**
 * The error a caller receives when the adaptive concurrency limit refused the
 * call: tRPC's own `TOO_MANY_REQUESTS` (HTTP 429), as a server that sheds
 * load answers, with the `ConcurrencyLimitError` as `cause`. Nothing was sent.
 * @internal
 */
export function limitRefusal(cause: ConcurrencyLimitError): TRPCClientError<AnyRouter> {
  return new TRPCClientError(cause.message, {
    cause,
    result: {
      error: {
        code: TRPC_ERROR_CODES_BY_KEY.TOO_MANY_REQUESTS,
        message: cause.message,
        data: { code: 'TOO_MANY_REQUESTS', httpStatus: 429 },
      },
    },
  });
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

/** The codes tRPC defines: the only server-sent values an `error.type` may carry. */
const KNOWN_CODES: ReadonlySet<string> = new Set(Object.keys(TRPC_ERROR_CODES_BY_KEY));

/** The `error.type` of a failure whose `data.code` is not a tRPC code (OpenTelemetry's fallback value). @internal */
export const OTHER_ERROR_TYPE = '_OTHER';

/**
 * The bounded name of a tRPC failure: its tRPC error code
 * (`INTERNAL_SERVER_ERROR`), `_OTHER` for a code tRPC does not define, and
 * the error's name when it has no code.
 * @internal
 */
export function trpcErrorType(error: unknown): string {
  const code = (error as { data?: { code?: unknown } | null } | null)?.data?.code;
  if (code === undefined || code === null) return errorTypeOf(error);
  // A server chooses its codes: one that tRPC does not define must not become a new attribute value.
  return typeof code === 'string' && KNOWN_CODES.has(code) ? code : OTHER_ERROR_TYPE;
}
