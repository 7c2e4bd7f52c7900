import http from 'node:http';
import https from 'node:https';
import { redactUrl } from '../internal/redact-url.js';
import { checkOneOf, checkOptions, type KnownKeys, optionalNumber } from '../internal/validate.js';
import { describeFailure, type HealthVerdict, type Probe } from './probe.js';
import { withProbeTimeout } from './probe-timeout.js';

/** Options of {@link createHttpProbe}. */
export interface HttpProbeOptions {
  /** Bound on the whole probe in ms, redirects and the GET retry included. Defaults to 5000 ms. */
  timeoutMs?: number;
  /** First request method; `HEAD` falls back to `GET` on 405 or 501. Defaults to `'HEAD'`. */
  method?: 'HEAD' | 'GET';
  /** Redirects followed per request before the probe fails. Defaults to 5. */
  maxRedirects?: number;
}

/** Keys of {@link HttpProbeOptions}. @internal */
export const HTTP_PROBE_KEYS = {
  timeoutMs: true,
  method: true,
  maxRedirects: true,
} as const satisfies KnownKeys<HttpProbeOptions>;

/** A URL an HTTP probe checks. */
export type HttpTarget = string | URL;

const REDIRECT = new Set([301, 302, 303, 307, 308]);

interface Answer {
  status: number;
  location: string | undefined;
}

/** One request; resolves as soon as the status line and headers are in. */
function request(url: URL, method: string, signal: AbortSignal): Promise<Answer> {
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    // agent: false → a fresh connection that closes afterwards: the probe proves
    // the target accepts connections now, and leaves no pooled socket behind.
    const req = lib.request(url, { method, signal, agent: false }, (res) => {
      const location = res.headers.location;
      resolve({ status: res.statusCode ?? 0, location });
      // The body is not evidence of availability; drop it and the connection.
      res.destroy();
    });
    req.once('error', reject);
    req.end();
  });
}

/** Follows redirects from `start` with `method`; returns the final status. */
async function follow(
  start: URL,
  method: 'HEAD' | 'GET',
  maxRedirects: number,
  signal: AbortSignal,
): Promise<HealthVerdict & { status: number }> {
  let url = start;
  let current = method;
  for (let hops = 0; ; hops++) {
    const { status, location } = await request(url, current, signal);
    if (!REDIRECT.has(status) || location === undefined) {
      const healthy = status >= 200 && status < 300;
      return { healthy, status, reason: `${current} ${redactUrl(url)} answered ${status}` };
    }
    if (hops >= maxRedirects) {
      return {
        healthy: false,
        status,
        reason: `more than ${maxRedirects} redirects from ${redactUrl(start)}`,
      };
    }
    url = new URL(location, url);
    // 303 means "see other with GET", whatever the original method was.
    if (status === 303) current = 'GET';
  }
}

/**
 * Creates an HTTP probe: `HEAD` the target following redirects; on 405 or 501
 * retry as `GET`; any non-2xx final status is unhealthy. Uses `node:http(s)`.
 * @example
 * createHealthChecker({ registry, targets: { api: 'http://10.0.0.1/healthz' },
 *   probe: createHttpProbe({ timeoutMs: 2000 }), intervalMs: 5000, timeoutMs: 3000 });
 */
export function createHttpProbe(options: HttpProbeOptions = {}): Probe<HttpTarget> {
  checkOptions('createHttpProbe', options, HTTP_PROBE_KEYS);
  const timeoutMs = optionalNumber('timeoutMs', options.timeoutMs, 5000, { min: 0 });
  const method =
    options.method === undefined ? 'HEAD' : checkOneOf('method', options.method, ['HEAD', 'GET']);
  const maxRedirects = optionalNumber('maxRedirects', options.maxRedirects, 5, {
    min: 0,
    integer: true,
  });
  return async (target, ctx) => {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      // Not echoed: an unparseable target may still hold a password or token.
      return { healthy: false, reason: 'invalid URL' };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return { healthy: false, reason: `unsupported protocol ${url.protocol}` };
    }
    return withProbeTimeout(
      ctx.signal,
      timeoutMs,
      `${method} ${redactUrl(url)}`,
      async (signal) => {
        try {
          const first = await follow(url, method, maxRedirects, signal);
          if (method === 'HEAD' && (first.status === 405 || first.status === 501)) {
            // Some servers refuse HEAD; a GET then decides.
            const second = await follow(url, 'GET', maxRedirects, signal);
            return { healthy: second.healthy, reason: second.reason };
          }
          return { healthy: first.healthy, reason: first.reason };
        } catch (error) {
          if (signal.aborted) throw error;
          return { healthy: false, reason: describeFailure(error) };
        }
      },
    );
  };
}

/** The HTTP probe with default options (`HEAD`, GET fallback, 5 redirects, 5 s). */
export const httpProbe: Probe<HttpTarget> = createHttpProbe();
