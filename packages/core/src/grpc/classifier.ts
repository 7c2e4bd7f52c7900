import {
  checkObject,
  checkOptions,
  type KnownKeys,
  keysOf,
  optionPath,
  optionTypeError,
} from '../internal/validate.js';
import { DONT_RETRY } from '../propagation/overloaded.js';
import type { ErrorVerdict } from '../retry/verdict.js';
import { GrpcStatus } from './status.js';

/** Reads one trailer value (grpc-js `Metadata`, nice-grpc `Metadata`, or a plain map all fit). */
export type TrailerGetter = (key: string) => string | undefined;

/** The pushback trailer a gRPC server sends to slow retries down (gRFC A6). */
export const PUSHBACK_TRAILER = 'grpc-retry-pushback-ms';

/** What the classifier knows about the attempt besides its status code. */
export interface GrpcAttemptInfo {
  /** Status details text; used to tell client-side failures apart. Defaults to `""`. */
  details?: string;
  /** The attempt ran under a per-attempt deadline earlier than the call's. Defaults to false. */
  perAttemptDeadline?: boolean;
  /**
   * The caller cancelled the call (its signal, `call.cancel()`): final, never
   * retried or failed over. Without it a `CANCELLED` is the server's. Defaults to false.
   */
  cancelledByCaller?: boolean;
  /**
   * The attempt received response headers from a server. `false`, with a
   * status that carries no server metadata (a trailers-only answer carries
   * `content-type`) and grpc-js's own connection-level `UNAVAILABLE` (no
   * connection, stream refused), marks the request never sent. Defaults to
   * true (assume the server may have seen it).
   */
  headersReceived?: boolean;
  /** Retry `ABORTED`. Defaults to false (usually a conflict the application must resolve). */
  retryAborted?: boolean;
  /** Retry `INTERNAL`. Defaults to false. */
  retryInternal?: boolean;
  /** Retry `UNKNOWN`. Defaults to false. */
  retryUnknown?: boolean;
}

/** A whole number of ms in ASCII digits, with only spaces or tabs around it (gRFC A6). */
const WHOLE_MS = /^[ \t]*(\d+)[ \t]*$/;

/**
 * Reads `grpc-retry-pushback-ms`: `undefined` without the trailer, `-1` when it
 * says "do not retry" (negative or not a whole number of ms in ASCII digits,
 * spaces or tabs around it allowed), else the delay in ms.
 */
export function parsePushback(trailer: TrailerGetter | undefined): number | undefined {
  const raw = trailer?.(PUSHBACK_TRAILER);
  if (raw === undefined) return undefined;
  const digits = WHOLE_MS.exec(raw)?.[1];
  return digits === undefined ? -1 : Number(digits);
}

// Verdicts are shared constants: classifying allocates nothing on the common paths.
const RETRY: ErrorVerdict = Object.freeze({ retry: true, failover: true, countForCircuit: true });
/** The server turned the attempt away untouched (`UNAVAILABLE`): the first retry goes at once. */
const RETRY_UNPROCESSED: ErrorVerdict = Object.freeze({
  retry: true,
  failover: true,
  countForCircuit: true,
  unprocessed: true,
});
/** A per-attempt deadline passed: retried at once (the attempt already waited). */
const RETRY_TIMED_OUT: ErrorVerdict = Object.freeze({
  retry: true,
  failover: true,
  countForCircuit: true,
  timedOut: true,
});
const FAIL_COUNTED: ErrorVerdict = Object.freeze({
  retry: false,
  failover: true,
  countForCircuit: true,
});
const FAIL_NEUTRAL: ErrorVerdict = Object.freeze({
  retry: false,
  failover: true,
  countForCircuit: false,
});
const CALLER_ERROR: ErrorVerdict = Object.freeze({
  retry: false,
  failover: false,
  countForCircuit: false,
});

// A request that provably never left: safe to repeat for any method (grpc-js's transparent retry).
const NEVER_SENT: ErrorVerdict = Object.freeze({
  retry: true,
  failover: true,
  countForCircuit: true,
  neverSent: true,
});

// grpc-js's own words for a call that found no connection, or whose stream the server refused.
const CONNECTION_FAILURE = /^(?:\w+: )?No connection established|^Stream refused by server/;

// Metadata only a server puts in a status: every gRPC response carries its content-type (a
// trailers-only answer in its trailers), and HTTP servers date their responses. A status
// grpc-js makes up for a call that found no connection carries no metadata at all.
const SERVER_SENT = ['content-type', 'date'] as const;

/**
 * The request provably never left: no server answered (no response headers, no
 * server metadata in the status) and grpc-js reports no connection or a refused
 * stream. The words alone prove nothing: a middle tier that forwards its own
 * backend's grpc-js error sends the same text after running the call.
 * @internal
 */
export function provenNeverSent(
  details: string,
  trailer: TrailerGetter | undefined,
  headersReceived: boolean,
): boolean {
  if (headersReceived) return false;
  if (SERVER_SENT.some((key) => trailer?.(key) !== undefined)) return false;
  return CONNECTION_FAILURE.test(details);
}

// Client-side INTERNAL failures say nothing about the server's health.
const CLIENT_SIDE_INTERNAL =
  /^(Request message serialization failure|Received message larger than max)/;

/**
 * Maps a gRPC status code to a Breakwater {@link ErrorVerdict} (SPEC §9).
 * Pure: the same inputs always give the same verdict. A retryable verdict
 * carries the `grpc-retry-pushback-ms` trailer as `retryAfterMs` (gRFC A6:
 * it replaces the backoff; negative or not a whole number, `-1`, stops the
 * retries), whatever the status. Defaults, by code:
 *
 * - `UNAVAILABLE` — retry, fail over, count for circuits (the server is not answering);
 *   `neverSent` only when nothing came back from a server (no headers, no server
 *   metadata such as `content-type` in the status) and grpc-js reports no
 *   connection or a refused stream (the request never left, so any method may
 *   repeat it); a server's text never decides it.
 * - `RESOURCE_EXHAUSTED` — retry only with a valid pushback trailer, after
 *   `retryAfterMs`; negative or non-numeric pushback means do not retry;
 *   not counted (a live server shed load or a quota was hit).
 * - `DEADLINE_EXCEEDED` — retry only under a per-attempt deadline, at once (`timedOut`); counted (slow server).
 * - `ABORTED` — not retried unless `retryAborted`; not counted.
 * - `INTERNAL`, `UNKNOWN` — not retried unless `retryInternal` / `retryUnknown`;
 *   counted, except client-side serialization / size failures.
 * - `DATA_LOSS` — not retried; counted.
 * - `CANCELLED` — never retried on the same target, never counted; sent by the
 *   server it may fail over to another target (`{ retry: false, failover: true }`),
 *   cancelled by the caller (`cancelledByCaller`) it is final.
 * - `INVALID_ARGUMENT`, `NOT_FOUND`, `ALREADY_EXISTS`, `PERMISSION_DENIED`,
 *   `UNAUTHENTICATED`, `FAILED_PRECONDITION`, `OUT_OF_RANGE`, `UNIMPLEMENTED` —
 *   the caller's problem: never retried, no failover, not counted.
 * - `OK` — not a failure: nothing to retry or count.
 */
export function classifyGrpcStatus(
  code: number,
  trailer: TrailerGetter | undefined,
  info: GrpcAttemptInfo = {},
): ErrorVerdict {
  // A Breakwater server whose own downstream is overloaded: retrying here would only multiply.
  if (code !== GrpcStatus.OK && trailer?.(PUSHBACK_TRAILER)?.trim() === '-1') return DONT_RETRY;
  const verdict = statusVerdict(code, trailer, info);
  if (verdict.retry === false || verdict.retryAfterMs !== undefined) return verdict;
  // gRFC A6: pushback applies to every retryable status (-1, "do not retry", for a bad value).
  const pushback = parsePushback(trailer);
  return pushback === undefined ? verdict : { ...verdict, retryAfterMs: pushback };
}

function statusVerdict(
  code: number,
  trailer: TrailerGetter | undefined,
  info: GrpcAttemptInfo,
): ErrorVerdict {
  if (info.cancelledByCaller) return CALLER_ERROR;
  switch (code) {
    case GrpcStatus.OK:
      return CALLER_ERROR;
    case GrpcStatus.UNAVAILABLE:
      return provenNeverSent(info.details ?? '', trailer, info.headersReceived ?? true)
        ? NEVER_SENT
        : RETRY_UNPROCESSED;
    case GrpcStatus.RESOURCE_EXHAUSTED: {
      const pushback = parsePushback(trailer);
      if (pushback === undefined || pushback < 0) return FAIL_NEUTRAL;
      return { retry: true, failover: true, countForCircuit: false, retryAfterMs: pushback };
    }
    case GrpcStatus.DEADLINE_EXCEEDED:
      return info.perAttemptDeadline ? RETRY_TIMED_OUT : FAIL_COUNTED;
    case GrpcStatus.ABORTED:
      return info.retryAborted
        ? { retry: true, failover: true, countForCircuit: false }
        : FAIL_NEUTRAL;
    case GrpcStatus.INTERNAL:
      if (CLIENT_SIDE_INTERNAL.test(info.details ?? '')) return CALLER_ERROR;
      return info.retryInternal ? RETRY : FAIL_COUNTED;
    case GrpcStatus.UNKNOWN:
      return info.retryUnknown ? RETRY : FAIL_COUNTED;
    case GrpcStatus.DATA_LOSS:
      return FAIL_COUNTED;
    case GrpcStatus.CANCELLED:
      // The server gave up on this call (the caller's own cancel returned above): another target may not.
      return FAIL_NEUTRAL;
    default:
      // Every "the request itself is wrong" code.
      return CALLER_ERROR;
  }
}

/** Per-method knobs of {@link createGrpcStatusClassifier}. */
export type GrpcStatusPolicy = Pick<
  GrpcAttemptInfo,
  'retryAborted' | 'retryInternal' | 'retryUnknown'
>;

/** Options of {@link createGrpcStatusClassifier}. */
export interface GrpcStatusClassifierOptions extends GrpcStatusPolicy {
  /** Overrides by full method path (`/pkg.Service/Method`) or service (`pkg.Service`). Defaults to none. */
  methods?: Readonly<Record<string, GrpcStatusPolicy>>;
  /** Last word on a verdict (e.g. retry `FAILED_PRECONDITION` for one method). Defaults to none. */
  override?: (input: GrpcClassifierInput, verdict: ErrorVerdict) => ErrorVerdict;
}

/** Keys of {@link GrpcStatusPolicy}. @internal */
export const GRPC_STATUS_POLICY_KEYS = keysOf<GrpcStatusPolicy>()([
  'retryAborted',
  'retryInternal',
  'retryUnknown',
]);

/** Keys of {@link GrpcStatusClassifierOptions}. @internal */
export const GRPC_STATUS_CLASSIFIER_KEYS = {
  ...GRPC_STATUS_POLICY_KEYS,
  methods: true,
  override: true,
} as const satisfies KnownKeys<GrpcStatusClassifierOptions>;

function checkClassifierOptions(options: GrpcStatusClassifierOptions): void {
  checkOptions(undefined, options, GRPC_STATUS_CLASSIFIER_KEYS, '', false);
  if (options.override !== undefined && typeof options.override !== 'function') {
    throw optionTypeError('override', `must be a function, got ${String(options.override)}`);
  }
  checkObject('methods', options.methods);
  for (const [key, policy] of Object.entries(options.methods ?? {})) {
    checkOptions(
      undefined,
      policy,
      GRPC_STATUS_POLICY_KEYS,
      `methods[${JSON.stringify(key)}]`,
      false,
    );
  }
}

/** Input of a configured classifier. */
export interface GrpcClassifierInput extends Omit<GrpcAttemptInfo, keyof GrpcStatusPolicy> {
  /** Full method path, e.g. `/pkg.Service/Method`. */
  path: string;
  /** Status code of the failed attempt. */
  code: number;
  /** The attempt's trailers. */
  trailer: TrailerGetter | undefined;
}

/** A configured classifier: gRPC attempt → verdict. */
export type GrpcStatusClassifier = (input: GrpcClassifierInput) => ErrorVerdict;

function serviceOf(path: string): string {
  return path.slice(1, path.lastIndexOf('/'));
}

/**
 * A classifier with per-method settings over {@link classifyGrpcStatus}.
 * @example
 * const classify = createGrpcStatusClassifier({ methods: { '/shop.Cart/Add': { retryAborted: true } } });
 */
export function createGrpcStatusClassifier(
  options: GrpcStatusClassifierOptions = {},
): GrpcStatusClassifier {
  optionPath('', () => checkClassifierOptions(options), 'createGrpcStatusClassifier');
  const base: GrpcStatusPolicy = {
    retryAborted: options.retryAborted ?? false,
    retryInternal: options.retryInternal ?? false,
    retryUnknown: options.retryUnknown ?? false,
  };
  const methods = options.methods ?? {};
  const resolved = new Map<string, GrpcStatusPolicy>();
  const policyFor = (path: string): GrpcStatusPolicy => {
    let policy = resolved.get(path);
    if (policy === undefined) {
      policy = { ...base, ...methods[serviceOf(path)], ...methods[path] };
      resolved.set(path, policy);
    }
    return policy;
  };
  const override = options.override;
  return (input) => {
    const policy = policyFor(input.path);
    const verdict = classifyGrpcStatus(input.code, input.trailer, {
      ...policy,
      details: input.details ?? '',
      perAttemptDeadline: input.perAttemptDeadline ?? false,
      cancelledByCaller: input.cancelledByCaller ?? false,
      headersReceived: input.headersReceived ?? true,
    });
    return override ? override(input, verdict) : verdict;
  };
}
