import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHttpProbe, httpProbe } from './http-probe.js';
import type { ProbeContext } from './probe.js';

const ctx = (signal = new AbortController().signal): ProbeContext => ({ provider: 'p', signal });

let server: http.Server;
let base: string;
let seen: string[];
let closedHangs: number;

beforeEach(async () => {
  seen = [];
  closedHangs = 0;
  server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    seen.push(`${req.method} ${path}`);
    const send = (status: number, headers: http.OutgoingHttpHeaders = {}) => {
      res.writeHead(status, headers);
      res.end(req.method === 'HEAD' ? undefined : 'body');
    };
    switch (path) {
      case '/no-head':
        return send(req.method === 'HEAD' ? 405 : 200);
      case '/not-implemented':
        return send(req.method === 'HEAD' ? 501 : 204);
      case '/r1':
        return send(302, { location: '/r2' });
      case '/r2':
        return send(301, { location: `${base}/ok` });
      case '/see-other':
        return send(303, { location: '/ok' });
      case '/loop':
        return send(307, { location: '/loop' });
      case '/ok':
        return send(200);
      case '/fail':
        return send(500);
      case '/hang':
        // Accepts the request and never answers.
        req.socket.once('close', () => {
          closedHangs += 1;
        });
        return;
      default:
        return send(404);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('httpProbe', () => {
  it('passes on a HEAD 200', async () => {
    await expect(httpProbe(`${base}/ok`, ctx())).resolves.toEqual({
      healthy: true,
      reason: `HEAD ${base}/ok answered 200`,
    });
    expect(seen).toEqual(['HEAD /ok']);
  });

  it('retries as GET when HEAD is answered 405, and the server sees both', async () => {
    const result = await httpProbe(`${base}/no-head`, ctx());
    expect(result).toMatchObject({ healthy: true, reason: expect.stringMatching(/^GET .* 200$/) });
    expect(seen).toEqual(['HEAD /no-head', 'GET /no-head']);
  });

  it('retries as GET on 501 too', async () => {
    await expect(httpProbe(`${base}/not-implemented`, ctx())).resolves.toMatchObject({
      healthy: true,
    });
    expect(seen).toEqual(['HEAD /not-implemented', 'GET /not-implemented']);
  });

  it('follows a redirect chain (relative and absolute locations) with HEAD', async () => {
    await expect(httpProbe(`${base}/r1`, ctx())).resolves.toMatchObject({ healthy: true });
    expect(seen).toEqual(['HEAD /r1', 'HEAD /r2', 'HEAD /ok']);
  });

  it('follows 303 with GET', async () => {
    await httpProbe(`${base}/see-other`, ctx());
    expect(seen).toEqual(['HEAD /see-other', 'GET /ok']);
  });

  it('fails after maxRedirects', async () => {
    const probe = createHttpProbe({ maxRedirects: 2 });
    await expect(probe(`${base}/loop`, ctx())).resolves.toEqual({
      healthy: false,
      reason: `more than 2 redirects from ${base}/loop`,
    });
    expect(seen).toEqual(['HEAD /loop', 'HEAD /loop', 'HEAD /loop']);
  });

  it('treats a non-2xx final status as a failure', async () => {
    await expect(httpProbe(`${base}/fail`, ctx())).resolves.toEqual({
      healthy: false,
      reason: `HEAD ${base}/fail answered 500`,
    });
    expect(seen).toEqual(['HEAD /fail']);
  });

  it('GET method skips HEAD', async () => {
    await createHttpProbe({ method: 'GET' })(`${base}/ok`, ctx());
    expect(seen).toEqual(['GET /ok']);
  });

  it('fails after its timeout and closes the connection', async () => {
    const probe = createHttpProbe({ timeoutMs: 100 });
    const started = performance.now();
    await expect(probe(`${base}/hang`, ctx())).resolves.toEqual({
      healthy: false,
      reason: `HEAD ${base}/hang timed out after 100 ms`,
    });
    expect(performance.now() - started).toBeLessThan(2000);
    await expect.poll(() => closedHangs).toBe(1);
  });

  it('rejects with the abort reason when its signal aborts, and closes the connection', async () => {
    const ac = new AbortController();
    const pending = httpProbe(`${base}/hang`, ctx(ac.signal));
    await expect.poll(() => seen.length).toBe(1);
    const reason = new Error('stopped');
    ac.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await expect.poll(() => closedHangs).toBe(1);
  });

  it('reports a refused connection and a bad URL as unhealthy', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(httpProbe(`http://127.0.0.1:${port}/`, ctx())).resolves.toMatchObject({
      healthy: false,
      reason: expect.stringMatching(/ECONNREFUSED/),
    });
    await expect(httpProbe('not a url', ctx())).resolves.toEqual({
      healthy: false,
      // The target is not echoed: an unparseable one may still hold a password or token.
      reason: 'invalid URL',
    });
    await expect(httpProbe('ftp://x/', ctx())).resolves.toMatchObject({ healthy: false });
  });

  it('validates its options, naming them', () => {
    expect(() => createHttpProbe({ timeoutMs: 'later' as never })).toThrow(/^timeoutMs must be/);
    expect(() => createHttpProbe({ method: 'POST' as never })).toThrow(/^method must be/);
    expect(() => createHttpProbe({ maxRedirects: -1 })).toThrow(/^maxRedirects must be/);
  });
});
