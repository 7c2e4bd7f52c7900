import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createStatusPreservingFetch } from './status-preserving-fetch.js';

async function withServer(
  handler: Parameters<typeof createServer>[1],
  body: (url: string) => Promise<void>,
): Promise<void> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    await body(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

describe('createStatusPreservingFetch', () => {
  it('turns a non-JSON 502 into a tRPC error envelope and keeps status and Retry-After', async () => {
    await withServer(
      (_req, res) => {
        res.writeHead(502, { 'content-type': 'text/html', 'retry-after': '1' });
        res.end('<html>502 Bad Gateway</html>');
      },
      async (url) => {
        const res = (await createStatusPreservingFetch()(url)) as Response;
        expect(res.status).toBe(502);
        expect(res.headers.get('retry-after')).toBe('1');
        expect(await res.json()).toEqual({
          error: {
            message: 'HTTP 502 Bad Gateway (non-JSON response)',
            code: -32603,
            data: { code: 'BAD_GATEWAY', httpStatus: 502, nonJsonResponse: true },
          },
        });
      },
    );
  });

  it('passes JSON and successful responses through untouched', async () => {
    await withServer(
      (req, res) => {
        const ok = req.url === '/ok';
        res.writeHead(ok ? 200 : 503, { 'content-type': ok ? 'text/plain' : 'application/json' });
        res.end(ok ? 'fine' : '{"error":1}');
      },
      async (url) => {
        const f = createStatusPreservingFetch();
        expect(await ((await f(`${url}/ok`)) as Response).text()).toBe('fine');
        expect(await ((await f(`${url}/json`)) as Response).json()).toEqual({ error: 1 });
      },
    );
  });

  it('rejects a non-function fetch', () => {
    expect(() => createStatusPreservingFetch(42 as never)).toThrow(TypeError);
  });
});
