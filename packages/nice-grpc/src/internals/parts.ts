import type { ResilienceOptions, ResilienceWarning } from '@breakwater/core';
import { MAX_ATTEMPTS } from '@breakwater/core/adapter';
import {
  createGrpcStatusClassifier,
  type GrpcRetryEvent,
  type GrpcStatusClassifier,
  type MethodSelector,
} from '@breakwater/core/grpc';
import {
  type AttemptEngine,
  checkLookalikeKeys,
  checkNumber,
  optionPath,
  optionTypeError,
  type ResiliencePlan,
  reportWarning,
  resolveResilience,
} from '@breakwater/core/internal';
import { type Sleep, systemClock, systemSleep } from '@breakwater/core/time';
import type { CallOptions, ClientMiddlewareCall, MethodDescriptor } from 'nice-grpc-common';
import { idempotencyRule } from '../idempotency.js';
import type { RetryCallOptions } from '../retry-middleware.js';
import { type DeadlineOption, deadlineAt, withTimeoutHeader } from './deadline.js';
import { checkCallOption } from './errors.js';
import type { ChainSettings } from './retry-chain.js';

/**
 * The plan of a single-purpose middleware whose flat options are the `key`
 * part of the vocabulary (found at option path `at`): errors name the
 * option as the caller wrote it.
 * @internal
 */
export function resolvePart(
  fn: string,
  key: string,
  shared: ResilienceOptions,
  at = '',
): ResiliencePlan {
  const rebase = (path: string) => {
    if (path !== key && !path.startsWith(`${key}.`)) return path;
    const rest = path.slice(key.length + 1);
    return at === '' ? rest : rest === '' ? at : `${at}.${rest}`;
  };
  return optionPath(rebase, () => resolveResilience(fn, '', shared, false), fn);
}

/** `o` without its `undefined` values (options built from a caller's flat keys). @internal */
export function compact<T extends object>(o: { [K in keyof T]: T[K] | undefined }): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(o)) if (value !== undefined) out[key] = value;
  return out as T;
}

/** Throws the `TypeError` of a single-purpose middleware called without its (required) options object. @internal */
export function requireObject(fn: string, options: unknown): void {
  if (typeof options !== 'object' || options === null) {
    throw optionTypeError('', `must be an object, got ${String(options)}`, fn);
  }
}

/** The retry/hedge stage's settings, shared by every call. @internal */
export interface AttemptStage extends ChainSettings {
  retry: AttemptEngine | undefined;
  hedge: AttemptEngine | undefined;
  isIdempotent(method: MethodDescriptor): boolean;
  /** Says once that a retried method is not known idempotent; `undefined` when `idempotent` was given. */
  warn: ((path: string) => void) | undefined;
}

/** The adapter's own keys of the retry/hedge stage. @internal */
export interface AttemptExtras {
  idempotent?: MethodSelector | boolean | undefined;
  classify?: GrpcStatusClassifier | undefined;
  onRetry?: ((event: GrpcRetryEvent) => void) | undefined;
  onWarning?: ((warning: ResilienceWarning) => void) | undefined;
  clock?: (() => number) | undefined;
  sleep?: Sleep | undefined;
  /** Whether the user gave the retry policy: the standard one, covering no method, warns nothing. */
  retryAsked?: boolean | undefined;
}

function checkListener(fn: string, name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') {
    throw optionTypeError(name, `must be a function, got ${String(value)}`, fn);
  }
}

/** Builds the retry/hedge stage from a resolved plan and the adapter's keys. @internal */
export function attemptStage(
  fn: string,
  plan: ResiliencePlan,
  o: AttemptExtras,
  retryPath = '',
): AttemptStage {
  const isIdempotent = optionPath('', () => idempotencyRule('idempotent', o.idempotent), fn);
  checkListener(fn, 'classify', o.classify);
  checkListener(fn, 'onWarning', o.onWarning);
  checkListener(fn, `${retryPath}onRetry`, o.onRetry);
  let warned = o.idempotent !== undefined || plan.retry === undefined || o.retryAsked !== true;
  const warn = warned
    ? undefined
    : (path: string) => {
        if (warned) return;
        warned = true;
        const message = `${fn}: retries are on, but ${path} is not known to be idempotent (no \`idempotent\` option, no idempotency_level in its definition): only its calls that never reached the server are retried`;
        reportWarning(o.onWarning, { code: 'no-idempotent-methods', path, message });
      };
  return {
    classify: o.classify ?? createGrpcStatusClassifier(),
    attemptTimeout: plan.attemptTimeout,
    onRetry: o.onRetry,
    clock: o.clock ?? systemClock,
    sleep: o.sleep ?? systemSleep,
    retry: plan.retry,
    hedge: plan.hedge,
    isIdempotent,
    warn,
  };
}

/** A call the stage does not repeat (client and bidi streams), sent with the time left. @internal */
export function passThrough<Request, Response>(
  stage: ChainSettings,
  call: ClientMiddlewareCall<Request, Response>,
  options: CallOptions,
) {
  const deadline = (options as DeadlineOption).deadline;
  if (deadline === undefined) return call.next(call.request, options);
  const left = deadlineAt(deadline, stage.clock) - stage.clock();
  const metadata = withTimeoutHeader(options.metadata, left);
  return call.next(call.request, Object.assign({}, options, { metadata }));
}

/** Every per-call key Breakwater's middleware and nice-grpc read: a key near one of them is a typo. */
const CALL_OPTION_KEYS = {
  deadline: true,
  attempts: true,
  retry: true,
  hedge: true,
  criticality: true,
  propagate: true,
  metadata: true,
  signal: true,
  onHeader: true,
  onTrailer: true,
} as const;

/**
 * The options below the retry/hedge stage: the caller's, without the stage's
 * own per-call keys. An invalid `attempts` is the call's `INVALID_ARGUMENT`
 * `ClientError` (thrown: the call rejects with it, unsent).
 * @internal
 */
export function ownOptions(callOptions: CallOptions & RetryCallOptions, path: string): CallOptions {
  // A misspelt key of ours would be ignored in silence; another middleware's passes.
  checkCallOption(path, () => checkLookalikeKeys(undefined, callOptions, CALL_OPTION_KEYS, ''));
  const { retry, hedge, attempts } = callOptions;
  if (retry === undefined && hedge === undefined && attempts === undefined) return callOptions;
  if (attempts !== undefined) {
    checkCallOption(path, () =>
      checkNumber('attempts', attempts, { integer: true, min: 1, max: MAX_ATTEMPTS }),
    );
  }
  const { retry: _r, hedge: _h, attempts: _a, ...rest } = callOptions;
  return rest;
}
