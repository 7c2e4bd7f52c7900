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

const BRAND = Symbol.for('breakwater.error');

/** The Breakwater error behind a status or `ServiceError`, if Breakwater refused the call. */
export function breakwaterCause(error: unknown): Error | undefined {
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (typeof cause !== 'object' || cause === null) return undefined;
  // The brand sits on the error class's prototype (core stamps it once per class).
  return (cause as Record<symbol, unknown>)[BRAND] === undefined ? undefined : (cause as Error);
}
