import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createHttpProbe, httpProbe } from './http-probe.js';
import type { ProbeWatch } from './probe.js';

let server: http.Server;
let base: string;
/** Open `/events` streams. */
let streams: http.ServerResponse[];

beforeEach(async () => {
  streams = [];
  server = http.createServer((req, res) => {
    const sse = (status = 200) =>
      res.writeHead(status, { 'content-type': 'text/event-stream; charset=utf-8' });
    switch (req.url) {
      case '/events':
        sse();
        // One event split over two writes, a comment line, then a second event.
        res.write('data: SERV');
        res.write('ING\n\n: keep-alive\n\n');
        streams.push(res);
        return;
      case '/plain':
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end('NOT_SERVING');
        return;
      case '/sse-503':
        sse(503);
        res.end();
        return;
      case '/end':
        sse();
        res.end('data: NOT_SERVING\r\n\r\n');
        return;
      case '/cut':
        sse();
        res.write('data: SERVING\n\n', () => res.socket?.destroy());
        return;
      default:
        res.writeHead(404).end();
    }
  });
  // The server's own sockets must not hide whether the client's keep the process alive.
  server.on('connection', (socket) => socket.unref());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const watchOf = (): ProbeWatch<string | URL> => {
  const watch = createHttpProbe({ watch: true }).watch;
  if (watch === undefined) throw new Error('no watch');
  return watch;
};

function start(path: string) {
  const reports: string[] = [];
  const ac = new AbortController();
  const ended = watchOf()(`${base}${path}`, {
    provider: 'p',
    signal: ac.signal,
    report: (healthy, reason) => reports.push(`${healthy}:${reason}`),
  });
  return { reports, ac, ended };
}

const tcpHandles = () =>
  process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;

describe('createHttpProbe({ watch: true })', () => {
  it('reports every event of a text/event-stream, SERVING healthy; its socket keeps no process alive', async () => {
    const before = tcpHandles();
    const { reports, ac, ended } = start('/events');
    await vi.waitFor(() => expect(reports).toEqual(['true:SERVING']));
    expect(tcpHandles()).toBe(before);
    streams[0]?.write('data: NOT_SERVING\n\n');
    streams[0]?.write('data: SERVING\n\n');
    await vi.waitFor(() => expect(reports).toHaveLength(3));
    expect(reports).toEqual(['true:SERVING', 'false:NOT_SERVING', 'true:SERVING']);
    ac.abort(new Error('stopped'));
    await expect(ended).rejects.toThrow();
    await vi.waitFor(() => expect(streams[0]?.destroyed).toBe(true));
  });

  it("resolves 'unsupported' for a target that answers anything but an event stream", async () => {
    await expect(start('/plain').ended).resolves.toBe('unsupported');
  });

  it('fails on a non-2xx event stream or a cut one; resolves when the server ends it', async () => {
    await expect(start('/sse-503').ended).rejects.toThrow(/answered 503/);
    const cut = start('/cut');
    await expect(cut.ended).rejects.toThrow(/was cut/);
    expect(cut.reports).toEqual(['true:SERVING']);
    const end = start('/end');
    await expect(end.ended).resolves.toBeUndefined();
    expect(end.reports).toEqual(['false:NOT_SERVING']);
  });

  it('rejects a bad target without echoing it; only watch: true watches; a bad option names it', async () => {
    const bad = watchOf()('http://user:secret@[bad', {
      provider: 'p',
      signal: new AbortController().signal,
      report: () => {},
    });
    await expect(bad).rejects.toThrow(/^invalid URL$/);
    expect(httpProbe.watch).toBeUndefined();
    expect(createHttpProbe({ watch: false }).watch).toBeUndefined();
    expect(() => createHttpProbe({ watch: 1 as never })).toThrow(/watch must be a boolean, got 1/);
  });
});
