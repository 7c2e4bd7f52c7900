import type { ServerResponse } from 'node:http';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import type { TrpcInjectedError } from './faults.js';

type CodeKey = keyof typeof TRPC_ERROR_CODES_BY_KEY;

// HTTP status → the tRPC code a tRPC server would put in `data.code`.
const CODE_BY_STATUS: Record<number, CodeKey> = {
  400: 'BAD_REQUEST',
  408: 'TIMEOUT',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  501: 'NOT_IMPLEMENTED',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
};

function proxyPage(status: number): string {
  const title = `${status} ${status === 502 ? 'Bad Gateway' : 'Error'}`;
  return `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
}

/**
 * Writes an injected failure the way the real thing would look: a tRPC JSON
 * error (one per call for a batch), a proxy's HTML page, or a dead socket.
 * @internal
 */
export function writeInjectedError(
  res: ServerResponse,
  error: TrpcInjectedError,
  paths: readonly string[],
  batch: boolean,
): void {
  if (error.type === 'reset') {
    res.socket?.destroy();
    return;
  }
  const status = error.status ?? (error.type === 'html' ? 502 : 503);
  if (error.retryAfterSeconds !== undefined) {
    res.setHeader('retry-after', String(error.retryAfterSeconds));
  }
  if (error.type === 'html') {
    res.writeHead(status, { 'content-type': 'text/html' });
    res.end(proxyPage(status));
    return;
  }
  const key = CODE_BY_STATUS[status] ?? 'INTERNAL_SERVER_ERROR';
  const envelope = (path: string | undefined) => ({
    error: {
      message: `chaos: injected ${status}`,
      code: TRPC_ERROR_CODES_BY_KEY[key],
      data: { code: key, httpStatus: status, ...(path === undefined ? {} : { path }) },
    },
  });
  const body = batch ? paths.map(envelope) : envelope(paths[0]);
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
