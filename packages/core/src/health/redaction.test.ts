import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactUrl, redactUrls } from '../internal/redact-url.js';
import { createManualClock } from '../time/manual-clock.js';
import { createHealthChecker, type ProbeResultEvent } from './checker.js';
import { createHttpProbe } from './http-probe.js';
import { type Probe, runProbe } from './probe.js';
import { createHealthRegistry } from './registry.js';
import { createTcpProbe } from './tcp-probe.js';

const SECRETS = ['secret', 'token=abc', 'user', 'frag'];
const expectNoSecret = (text: string) => {
  for (const s of SECRETS) expect(text).not.toContain(s);
};

let server: http.Server;
let port: number;
let refusedPort: number;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url?.startsWith('/redirect')) {
      res.writeHead(302, { location: '/redirect?token=abc' });
    } else {
      res.writeHead(500);
    }
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  // A port that refuses: bound, then closed.
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  refusedPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const ctx = () => ({ provider: 'p', signal: new AbortController().signal });

describe('health reasons never carry userinfo, query strings or fragments (issue 16 #14)', () => {
  it('httpProbe against a real server answering 500: scheme://host:port/path only', async () => {
    const probe = createHttpProbe({ timeoutMs: 5000 });
    const v = await runProbe(
      probe,
      `http://user:secret@127.0.0.1:${port}/health?token=abc#frag`,
      ctx(),
    );
    expect(v.healthy).toBe(false);
    expect(v.reason).toBe(`HEAD http://127.0.0.1:${port}/health answered 500`);
  });

  it('httpProbe to a refused port and through too many redirects', async () => {
    const refused = await runProbe(
      createHttpProbe(),
      `http://user:secret@127.0.0.1:${refusedPort}/health?token=abc`,
      ctx(),
    );
    expect(refused.healthy).toBe(false);
    expect(refused.reason).toContain('ECONNREFUSED');
    expectNoSecret(refused.reason);
    const loop = await runProbe(
      createHttpProbe({ maxRedirects: 1 }),
      `http://user:secret@127.0.0.1:${port}/redirect?token=abc`,
      ctx(),
    );
    expect(loop.reason).toBe(`more than 1 redirects from http://127.0.0.1:${port}/redirect`);
  });

  it('httpProbe timing out names the redacted URL', async () => {
    // Accepts the request and never answers.
    const hang = http.createServer(() => {});
    await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve));
    const hangPort = (hang.address() as AddressInfo).port;
    try {
      const v = await runProbe(
        createHttpProbe({ timeoutMs: 20 }),
        `http://user:secret@127.0.0.1:${hangPort}/h?token=abc`,
        ctx(),
      );
      expect(v.reason).toBe(`HEAD http://127.0.0.1:${hangPort}/h timed out after 20 ms`);
    } finally {
      hang.closeAllConnections();
      await new Promise((resolve) => hang.close(resolve));
    }
  });

  it('an unparseable URL or TCP target is not echoed with its secret', async () => {
    const bad = await runProbe(createHttpProbe(), 'http://user:secret@[bad/?token=abc', ctx());
    expect(bad.healthy).toBe(false);
    expectNoSecret(bad.reason);
    const tcp = await runProbe(
      createTcpProbe(),
      'http://user:secret@db/x?token=abc' as never,
      ctx(),
    );
    expect(tcp.healthy).toBe(false);
    expectNoSecret(tcp.reason);
  });

  it('custom probes: URLs in thrown messages and in reasons are redacted too', async () => {
    const throwing: Probe<string> = async (url) => {
      throw new Error(`GET ${url} failed (see https://status.example/x?token=abc)`);
    };
    const url = 'https://user:secret@api.example:8443/healthz?token=abc';
    const v = await runProbe(throwing, url, ctx());
    expect(v.reason).toBe(
      'GET https://api.example:8443/healthz failed (see https://status.example/x)',
    );
    const resolving: Probe<string> = async (u) => ({ healthy: false, reason: `down: ${u}` });
    expect((await runProbe(resolving, url, ctx())).reason).toBe(
      'down: https://api.example:8443/healthz',
    );
  });

  it('the checker’s events (500 and refused port) carry no secret', async () => {
    const clock = createManualClock(0);
    const registry = createHealthRegistry({ clock });
    const checker = createHealthChecker<string>({
      registry,
      targets: {
        a: `http://user:secret@127.0.0.1:${port}/health?token=abc`,
        b: `http://user:secret@127.0.0.1:${refusedPort}/health?token=abc`,
      },
      probe: createHttpProbe({ timeoutMs: 5000 }),
      intervalMs: 60_000,
      timeoutMs: 5000,
      sleep: clock.sleep,
      clock,
    });
    const events: ProbeResultEvent[] = [];
    checker.onProbeResult((e) => events.push(e));
    try {
      await checker.checkNow();
    } finally {
      checker.stop();
    }
    expect(events.length).toBeGreaterThanOrEqual(2);
    for (const e of events) {
      expect(e.healthy).toBe(false);
      expectNoSecret(JSON.stringify(e));
    }
  });
});

describe('redactUrls', () => {
  it('keeps scheme://host:port/path and drops userinfo, query and fragment', () => {
    expect(redactUrl(new URL('https://u:p@h.example:444/a/b?q=1#f'))).toBe(
      'https://h.example:444/a/b',
    );
    expect(redactUrls('no url here')).toBe('no url here');
    expect(redactUrls('a http://u:p@h/x?t=1, then "ws://h:1/y#z"')).toBe(
      'a http://h/x, then "ws://h:1/y"',
    );
    expect(redactUrls('broken http://u:p@[zz/?t=1 end')).toBe('broken http://[redacted] end');
  });
});
