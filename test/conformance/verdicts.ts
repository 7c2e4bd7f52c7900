import { status as Status } from '@grpc/grpc-js';
import type { CallerCode } from './types.js';

const BY_HTTP_STATUS: Record<number, CallerCode> = {
  408: 'DEADLINE_EXCEEDED',
  499: 'CANCELLED',
  502: 'BAD_GATEWAY',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const BY_TRPC_CODE: Record<string, CallerCode> = {
  SERVICE_UNAVAILABLE: 'UNAVAILABLE',
  BAD_GATEWAY: 'BAD_GATEWAY',
  TIMEOUT: 'DEADLINE_EXCEEDED',
  GATEWAY_TIMEOUT: 'DEADLINE_EXCEEDED',
  CLIENT_CLOSED_REQUEST: 'CANCELLED',
  TOO_MANY_REQUESTS: 'RESOURCE_EXHAUSTED',
};

type Loose = {
  name?: unknown;
  code?: unknown;
  cause?: unknown;
  errors?: unknown;
  message?: unknown;
  data?: { httpStatus?: unknown; code?: unknown } | null;
  meta?: { response?: { status?: unknown } } | null;
};

const GRPC_NAMES: Record<number, CallerCode> = {
  [Status.UNAVAILABLE]: 'UNAVAILABLE',
  [Status.DEADLINE_EXCEEDED]: 'DEADLINE_EXCEEDED',
  [Status.CANCELLED]: 'CANCELLED',
  [Status.RESOURCE_EXHAUSTED]: 'RESOURCE_EXHAUSTED',
};

/**
 * What the caller got, named the same for every transport: a gRPC status
 * (grpc-js `ServiceError`, nice-grpc `ClientError`), a tRPC error's HTTP
 * status or code, a core error (the router's `RoutingError` is judged by the
 * last operation error it carries: the last attempt's), or an abort.
 */
export function callerCode(error: unknown, depth = 0): CallerCode {
  const e = (error ?? {}) as Loose;
  if (depth > 5) return 'OTHER';
  if (e.name === 'RoutingError' && Array.isArray(e.errors)) {
    const last = e.errors.at(-1);
    return last === undefined ? 'REFUSED' : callerCode(last, depth + 1);
  }
  // Before the numeric-code check: a DOMException AbortError has `code` 20.
  if (e.name === 'AbortError' || e.name === 'OperationAbortedError') return 'CANCELLED';
  if (typeof e.code === 'number' && e.name !== 'TRPCClientError') {
    return GRPC_NAMES[e.code] ?? 'OTHER';
  }
  if (e.name === 'DeadlineExceededError' || e.name === 'TimeoutError') return 'DEADLINE_EXCEEDED';
  if (e.name === 'CircuitOpenError' || e.name === 'BudgetExhaustedError') return 'REFUSED';
  const trpcCode = typeof e.data?.code === 'string' ? BY_TRPC_CODE[e.data.code] : undefined;
  if (trpcCode !== undefined) return trpcCode;
  const http = e.data?.httpStatus ?? e.meta?.response?.status;
  if (typeof http === 'number' && BY_HTTP_STATUS[http] !== undefined) {
    return BY_HTTP_STATUS[http] as CallerCode;
  }
  if (e.cause !== undefined && e.cause !== error) {
    const inner = callerCode(e.cause, depth + 1);
    if (inner !== 'OTHER') return inner;
  }
  // undici: a refused connection is "fetch failed" caused by ECONNREFUSED.
  if (e.code === 'ECONNREFUSED' || e.message === 'fetch failed') return 'UNAVAILABLE';
  return 'OTHER';
}

/** Core's refusals, by error name: what refused a call before it was sent. */
const REFUSALS = {
  CircuitOpenError: 'circuit',
  RateLimitError: 'rate-limit',
  QueueFullError: 'queue-full',
  ConcurrencyLimitError: 'concurrency-limit',
} as const;

/** Which admission step refused `error`'s call (a core error somewhere in its `cause` chain), if any. */
export function refusedBy(
  error: unknown,
  depth = 0,
): (typeof REFUSALS)[keyof typeof REFUSALS] | undefined {
  const e = (error ?? {}) as Loose;
  if (depth > 5) return undefined;
  const name = typeof e.name === 'string' ? e.name : '';
  if (name in REFUSALS) return REFUSALS[name as keyof typeof REFUSALS];
  // The router refuses a request every provider's circuit turned away with a RoutingError without operation errors.
  if (name === 'RoutingError' && Array.isArray(e.errors) && e.errors.length === 0) return 'circuit';
  return e.cause !== undefined && e.cause !== error ? refusedBy(e.cause, depth + 1) : undefined;
}
