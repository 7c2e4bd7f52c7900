import { DeadlineExceededError, isDeadlineExceededError } from '@breakwater/core';
import { ClientError, Status } from 'nice-grpc-common';

/**
 * A nice-grpc `ClientError` for a call Breakwater refused, with the core
 * error as `cause` (circuit open → `UNAVAILABLE`, queue full or rate limit →
 * `RESOURCE_EXHAUSTED`, deadline → `DEADLINE_EXCEEDED`).
 * @internal
 */
export function refusal(path: string, code: Status, cause: Error): ClientError {
  const error = new ClientError(path, code, cause.message);
  // Non-enumerable, like a native `cause`: loggers that print own properties stay tidy.
  Object.defineProperty(error, 'cause', { value: cause, configurable: true, writable: true });
  return error;
}

/**
 * The error of a call whose last attempt ran under its own deadline
 * (`attemptTimeoutMs`, earlier than the call's): a deadline that ended it —
 * our timer's or the server's `DEADLINE_EXCEEDED` — is named as the
 * attempt's, so the message says which deadline passed. Other errors pass.
 * @internal
 */
export function attemptDeadline(path: string, limitMs: number, error: unknown): unknown {
  const ours = isDeadlineExceededError(error);
  if (!ours && !(error instanceof ClientError && error.code === Status.DEADLINE_EXCEEDED)) {
    return error;
  }
  const message = `Attempt deadline of ${limitMs} ms exceeded (attemptTimeoutMs; the call's own deadline had not passed)`;
  const why = new DeadlineExceededError(limitMs, ours ? { message } : { message, cause: error });
  return refusal(path, Status.DEADLINE_EXCEEDED, why);
}

/**
 * The `ClientError` (`INVALID_ARGUMENT`) for a call whose own options are
 * invalid (`attempts: 20`, `deadline: NaN`): the call is not sent, and the
 * option's `TypeError`/`RangeError` is its `cause`.
 * @internal
 */
export function callOptionError(path: string, cause: Error): ClientError {
  const error = new ClientError(path, Status.INVALID_ARGUMENT, `call option ${cause.message}`);
  Object.defineProperty(error, 'cause', { value: cause, configurable: true, writable: true });
  return error;
}

/** Runs a per-call option's `check`; what it throws becomes the call's {@link callOptionError}. @internal */
export function checkCallOption(path: string, check: () => unknown): void {
  try {
    check();
  } catch (error) {
    throw callOptionError(path, error as Error);
  }
}

/**
 * The error a nice-grpc caller expects when its signal aborted: `name`
 * `AbortError` (what `isAbortError` from `abort-controller-x` checks), with
 * the signal's reason as `cause`.
 * @internal
 */
export function abortErrorFor(signal: AbortSignal): Error {
  const error = new Error('The operation has been aborted', { cause: signal.reason });
  error.name = 'AbortError';
  return error;
}

/** True for nice-grpc's (or any) `AbortError`. @internal */
export function isAbortError(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { name?: unknown }).name === 'AbortError'
  );
}

/** What a failed `next()` means for classification. @internal */
export interface FailureStatus {
  code: Status;
  details: string;
}

/**
 * The gRPC status behind an error thrown by `next()`: a `ClientError`'s own,
 * `DEADLINE_EXCEEDED` for an abort caused by a Breakwater deadline, and
 * `undefined` for caller cancellation or anything that is not a call outcome
 * (those are neutral for circuits and never retried).
 * @internal
 */
export function failureStatus(
  error: unknown,
  signal: AbortSignal | undefined,
): FailureStatus | undefined {
  if (error instanceof ClientError) return error;
  if (isAbortError(error) && signal?.aborted && isDeadlineExceededError(signal.reason)) {
    return { code: Status.DEADLINE_EXCEEDED, details: 'Deadline exceeded' };
  }
  return undefined;
}
