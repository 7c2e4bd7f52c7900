import net from 'node:net';
import { redactUrls } from '../internal/redact-url.js';
import { checkOptions, keysOf, optionalNumber } from '../internal/validate.js';
import type { HealthVerdict, Probe } from './probe.js';
import { withProbeTimeout } from './probe-timeout.js';

/** Options of {@link createTcpProbe}. */
export interface TcpProbeOptions {
  /** How long the connect may take, in ms. Defaults to 500 ms. */
  timeoutMs?: number;
}

/** Keys of {@link TcpProbeOptions}. @internal */
export const TCP_PROBE_KEYS = keysOf<TcpProbeOptions>()(['timeoutMs']);

/** Where a TCP probe connects: `"host:port"` (`"[::1]:80"` for IPv6) or `{ host, port }`. */
export type TcpTarget =
  | string
  | {
      /** Host name or IP address to connect to. */
      host: string;
      /** TCP port to connect to. */
      port: number;
    };

/** Splits a TCP target into host and port, or explains why it cannot. */
function parseTarget(target: TcpTarget): { host: string; port: number } | string {
  if (typeof target === 'object' && target !== null) return target;
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(String(target));
  if (!m) return `invalid TCP target ${redactUrls(String(target))} (expected "host:port")`;
  return { host: m[1] as string, port: Number(m[2]) };
}

/** One connect attempt; the socket is destroyed however it ends. */
function connect(host: string, port: number, signal: AbortSignal): Promise<HealthVerdict> {
  return new Promise<HealthVerdict>((resolve, reject) => {
    const socket = net.connect({ host, port });
    const done = () => {
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
    };
    const onAbort = () => {
      done();
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      done();
      resolve({ healthy: true, reason: `connected to ${host}:${port}` });
    });
    socket.once('error', (error) => {
      done();
      resolve({ healthy: false, reason: error.message });
    });
  });
}

/**
 * Creates a TCP probe: connect with a timeout, then destroy the socket at once.
 * It proves the port accepts connections, nothing about the service behind it.
 * @example createTcpProbe({ timeoutMs: 250 })('db.internal:5432', ctx)
 */
export function createTcpProbe(options: TcpProbeOptions = {}): Probe<TcpTarget> {
  checkOptions('createTcpProbe', options, TCP_PROBE_KEYS);
  const timeoutMs = optionalNumber('timeoutMs', options.timeoutMs, 500, { min: 0 });
  return async (target, ctx) => {
    const parsed = parseTarget(target);
    if (typeof parsed === 'string') return { healthy: false, reason: parsed };
    const { host, port } = parsed;
    return withProbeTimeout(ctx.signal, timeoutMs, `connect to ${host}:${port}`, (signal) =>
      connect(host, port, signal),
    );
  };
}

/** The TCP probe with default options (500 ms connect timeout). */
export const tcpProbe: Probe<TcpTarget> = createTcpProbe();
