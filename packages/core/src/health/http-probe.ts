import http from 'node:http';
import https from 'node:https';
import { redactUrl } from '../internal/redact-url.js';
import {
  checkOneOf,
  checkOptions,
  describeValue,
  keysOf,
  optionalNumber,
  optionTypeError,
} from '../internal/validate.js';
import { EventStreamReader } from './event-stream.js';
import {
  describeFailure,
  type HealthVerdict,
  type Probe,
  type ProbeWatch,
  type ProbeWatchContext,
} from './probe.js';
import { withProbeTimeout } from './probe-timeout.js';

/** Options of {@link createHttpProbe}. */
export interface HttpProbeOptions {
  /** Bound on the whole probe in ms, redirects and the GET retry included. Defaults to 5000 ms. */
  timeoutMs?: number;
  /** First request method; `HEAD` falls back to `GET` on 405 or 501. Defaults to `'HEAD'`. */
  method?: 'HEAD' | 'GET';
  /** Redirects followed per request before the probe fails. Defaults to 5. */
  maxRedirects?: number;
  /**
   * Also watch the target (HTTP has no standard health watch; this is a small
   * convention): `GET` it with `accept: text/event-stream`; a 2xx event stream
   * is kept open and each event's data is a status, `SERVING` healthy and
   * anything else unhealthy. A target answering anything but an event stream
   * is polled instead. The watch's socket does not keep the process alive.
   * Defaults to false.
   */
  watch?: boolean;
  /**
   * Largest event a watch reads, in bytes: its lines up to the blank line that
   * ends it, comments included. A target that sends a larger one (or a line
   * that never ends) is unhealthy, and its stream is closed. Integer >= 1.
   * Defaults to 65536 (64 KiB).
   */
  maxEventBytes?: number;
}

/** Keys of {@link HttpProbeOptions}. @internal */
export const HTTP_PROBE_KEYS = keysOf<HttpProbeOptions>()([
  'timeoutMs',
  'method',
  'maxRedirects',
  'watch',
  'maxEventBytes',
]);

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
      // The body is not evidence of availability: none of it is read (so a huge
      // one costs nothing); drop it and the connection.
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

/** Parses a `target` for the probe, or explains why not (never echoing it: it may hold a secret). */
function parseTarget(target: HttpTarget): URL | string {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return 'invalid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `unsupported protocol ${url.protocol}`;
  }
  return url;
}

/** Reports each server-sent event's data as a status; resolves how the stream ended. */
function watchEvents(
  url: URL,
  maxEventBytes: number,
  ctx: ProbeWatchContext,
): Promise<'unsupported' | undefined> {
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const headers = { accept: 'text/event-stream' };
    const req = lib.request(url, { headers, signal: ctx.signal, agent: false }, (res) => {
      const status = res.statusCode ?? 0;
      if (!(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        res.destroy();
        resolve('unsupported');
        return;
      }
      if (status < 200 || status >= 300) {
        res.destroy();
        reject(new Error(`GET ${redactUrl(url)} answered ${status}`));
        return;
      }
      const events = new EventStreamReader(maxEventBytes, (value) =>
        ctx.report(value.trim() === 'SERVING', value),
      );
      res.on('data', (chunk: Buffer) => {
        if (events.push(chunk)) return;
        res.destroy();
        reject(
          new Error(
            `event stream from ${redactUrl(url)} sent an event over ${maxEventBytes} bytes`,
          ),
        );
      });
      res.once('close', () => {
        if (res.complete) resolve(undefined);
        else reject(new Error(`event stream from ${redactUrl(url)} was cut`));
      });
    });
    // A background watch must never keep the process alive.
    req.once('socket', (socket) => socket.unref());
    req.once('error', reject);
    req.end();
  });
}

/**
 * Creates an HTTP probe: `HEAD` the target following redirects; on 405 or 501
 * retry as `GET`; any non-2xx final status is unhealthy. Uses `node:http(s)`.
 * Reads only the status line and headers (at most Node's `maxHeaderSize`,
 * 16 KiB by default), never the body, so a huge answer costs nothing.
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
  if (options.watch !== undefined && typeof options.watch !== 'boolean') {
    throw optionTypeError(
      'watch',
      `must be a boolean, got ${describeValue(options.watch)}`,
      'createHttpProbe',
    );
  }
  const maxEventBytes = optionalNumber('maxEventBytes', options.maxEventBytes, 65_536, {
    min: 1,
    integer: true,
  });
  const watch: ProbeWatch<HttpTarget> = async (target, ctx) => {
    const url = parseTarget(target);
    if (typeof url === 'string') throw new Error(url);
    return watchEvents(url, maxEventBytes, ctx);
  };
  const probe: Probe<HttpTarget> = async (target, ctx) => {
    const url = parseTarget(target);
    if (typeof url === 'string') return { healthy: false, reason: url };
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
  return options.watch === true ? Object.assign(probe, { watch }) : probe;
}

/** The HTTP probe with default options (`HEAD`, GET fallback, 5 redirects, 5 s). */
export const httpProbe: Probe<HttpTarget> = createHttpProbe();
