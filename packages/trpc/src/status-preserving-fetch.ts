import type { HTTPBatchLinkOptions } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';

/** The `fetch` shape tRPC's HTTP links accept (their `fetch` option). */
export type FetchLike = NonNullable<
  HTTPBatchLinkOptions<AnyRouter['_def']['_config']['$types']>['fetch']
>;

// HTTP status → the tRPC code a tRPC server would have sent with it.
const CODE_BY_STATUS: Record<number, [string, number]> = {
  400: ['BAD_REQUEST', -32600],
  401: ['UNAUTHORIZED', -32001],
  403: ['FORBIDDEN', -32003],
  404: ['NOT_FOUND', -32004],
  408: ['TIMEOUT', -32008],
  429: ['TOO_MANY_REQUESTS', -32029],
  500: ['INTERNAL_SERVER_ERROR', -32603],
  501: ['NOT_IMPLEMENTED', -32603],
  502: ['BAD_GATEWAY', -32603],
  503: ['SERVICE_UNAVAILABLE', -32603],
  504: ['GATEWAY_TIMEOUT', -32603],
};

function errorEnvelope(res: Response): unknown {
  const [code, rpcCode] =
    CODE_BY_STATUS[res.status] ??
    (res.status >= 500 ? ['INTERNAL_SERVER_ERROR', -32603] : ['BAD_REQUEST', -32600]);
  return {
    error: {
      message: `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''} (non-JSON response)`,
      code: rpcCode,
      data: { code, httpStatus: res.status, nonJsonResponse: true },
    },
  };
}

/**
 * Wraps `fetch` for tRPC's `httpLink`/`httpBatchLink` so a non-JSON error
 * response (a proxy's HTML 502, a load balancer's plain-text 503) keeps its
 * HTTP status: tRPC would fail to parse the body and drop the response
 * (`meta` undefined). Such a response is read as a tRPC error with
 * `data.httpStatus` and `data.code` for the status, and `meta.response`
 * still holds the original response, so its `Retry-After` is visible to the
 * classifier. JSON and successful responses pass through untouched.
 * @example
 * httpBatchLink({ url, fetch: createStatusPreservingFetch() })
 */
export function createStatusPreservingFetch(
  fetchImpl: FetchLike = globalThis.fetch as FetchLike,
): FetchLike {
  if (typeof fetchImpl !== 'function') {
    throw new TypeError(
      `createStatusPreservingFetch(fetch) must be a function, got ${typeof fetchImpl}`,
    );
  }
  return async (input, init) => {
    // Every real fetch returns a full Response; tRPC's type only promises a subset.
    const res = (await fetchImpl(input, init)) as Response;
    if (res.ok || (res.headers.get('content-type') ?? '').includes('json')) return res;
    const envelope = errorEnvelope(res);
    // Keep the real Response (status, headers) but answer `json()` with the envelope;
    // the body is drained so the connection can be reused.
    return new Proxy(res, {
      get(target, key) {
        if (key === 'json') {
          return async () => {
            await target.text().catch(() => undefined);
            return envelope;
          };
        }
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  };
}
