import { Metadata, type status as Status, type StatusObject } from '@grpc/grpc-js';

/**
 * A status whose enumerable `cause` survives grpc-js's `callErrorFromStatus`
 * (it `Object.assign`s the status onto the error), so callers get a
 * `ServiceError` whose `cause` is the Breakwater error.
 * @internal
 */
export function statusWithCause(code: Status, details: string, cause: unknown): StatusObject {
  return { code, details, metadata: new Metadata(), cause } as StatusObject;
}

/** The Breakwater error behind a status or `ServiceError`, if Breakwater refused the call. */
export function breakwaterCause(error: unknown): Error | undefined {
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (typeof cause !== 'object' || cause === null) return undefined;
  return Object.getOwnPropertySymbols(cause).some((s) => s === Symbol.for('breakwater.error'))
    ? (cause as Error)
    : undefined;
}
