import { type ErrorVerdict, isDeadlineExceededError } from '@breakwater/core';
import { Status } from 'nice-grpc-common';
import type { Attempt } from './attempt.js';
import { failureStatus } from './errors.js';
import type { ChainSettings } from './retry-chain.js';

const NOT_RETRYABLE: ErrorVerdict = Object.freeze({ retry: false });

/**
 * The nice-grpc error of a failed attempt as a core verdict (the adapter's
 * error mapping): the classifier's, refused for a method not safe to repeat
 * unless the request provably never left.
 * @internal
 */
export function judgeAttempt(
  s: ChainSettings,
  path: string,
  attempt: Attempt,
  error: unknown,
  deadline: number,
  idempotent: boolean,
): ErrorVerdict {
  // withTimeout rejects with DeadlineExceededError only when this attempt's own deadline passed.
  const status = isDeadlineExceededError(error)
    ? { code: Status.DEADLINE_EXCEEDED, details: error.message }
    : failureStatus(error, attempt.options.signal);
  if (status === undefined) return NOT_RETRYABLE;
  const verdict = s.classify({
    path,
    code: status.code,
    details: status.details,
    trailer: attempt.trailerValue(),
    perAttemptDeadline: attempt.perAttempt && s.clock() < deadline,
    headersReceived: attempt.headersReceived,
  });
  return idempotent || verdict.neverSent === true ? verdict : NOT_RETRYABLE;
}
