// What a hostile target can make the HTTP probe and watch hold: a raw
// node:http server sends 40 MB an answer (or 10,000 events a second), and the
// heap after gc must stay within a few MB of what it was before.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHttpProbe } from './http-probe.js';
import type { Probe } from './probe.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
setFlagsFromString('--no-expose-gc');

const MB = 1024 * 1024;
const heapAfterGc = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

/** What the server sent on one answer, and whether the client closed it first. */
interface Sent {
  bytes: number;
  closedEarly: boolean;
}

let server: http.Server;
let base: string;
/** Settles when the server is done with this test's answer. */
let sent: Promise<Sent>;
let answering: (done: Promise<Sent>) => void;

/** Writes `piece` after `head` until `total` bytes are out or the client is gone, minding backpressure. */
function pump(res: http.ServerResponse, head: string, piece: string, total: number): Promise<Sent> {
  return new Promise((resolve) => {
    let bytes = 0;
    let closed = false;
    res.once('close', () => {
      closed = true;
      resolve({ bytes, closedEarly: bytes < total });
    });
    res.write(head);
    const chunk = Buffer.from(piece.repeat(Math.ceil((64 * 1024) / piece.length)));
    const more = () => {
      while (!closed && bytes < total) {
        bytes += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', more);
          return;
        }
      }
      // Not ended: the stream stays open, as a hostile target's would.
      if (!closed) resolve({ bytes, closedEarly: false });
    };
    more();
  });
}

/** Sends `SERVING` events at 10,000 a second for one second (100 every 10 ms). */
function tenThousandASecond(res: http.ServerResponse): Promise<Sent> {
  return new Promise((resolve) => {
    let events = 0;
    const timer = setInterval(() => {
      res.write('data: SERVING\n\n'.repeat(100));
      events += 100;
      if (events >= 10_000) {
        clearInterval(timer);
        resolve({ bytes: events, closedEarly: false });
      }
    }, 10);
    res.once('close', () => clearInterval(timer));
  });
}

beforeEach(async () => {
  sent = new Promise((resolve) => {
    answering = resolve;
  });
  server = http.createServer((req, res) => {
    const sse = () => res.writeHead(200, { 'content-type': 'text/event-stream' });
    switch (req.url) {
      case '/endless-line':
        sse();
        answering(pump(res, 'data: ', 'x', 40 * MB));
        return;
      case '/endless-event':
        sse();
        answering(pump(res, '', 'data: NOT_SERVING\n', 40 * MB));
        return;
      case '/fast':
        sse();
        answering(tenThousandASecond(res));
        return;
      case '/big-body':
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        answering(pump(res, '', 'x', 40 * MB));
        return;
      default:
        res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Watches `path` with the default limits; the reports are the verdicts. */
function startWatch(path: string) {
  const reports: boolean[] = [];
  const ac = new AbortController();
  const { watch } = createHttpProbe({ watch: true }) as Required<Probe<string>>;
  const report = (healthy: boolean) => reports.push(healthy);
  const ended = watch(`${base}${path}`, { provider: 'p', signal: ac.signal, report });
  // Observed here so an early rejection is never unhandled; asserted below.
  ended.catch(() => {});
  return { reports, ac, ended };
}

describe('createHttpProbe memory against a hostile target', () => {
  it.each([
    ['a line that never ends', '/endless-line'],
    ['an event whose data lines never reach a blank line', '/endless-event'],
  ])(
    'a watch reading %s closes the stream at 64 KiB (unhealthy) and holds no more',
    async (_, path) => {
      const baseline = heapAfterGc();
      const { reports, ac, ended } = startWatch(path);
      const { bytes, closedEarly } = await sent;
      const grown = heapAfterGc() - baseline;
      ac.abort(new Error('test over'));
      expect(grown).toBeLessThan(4 * MB);
      // The client closed the stream long before the 40 MB were out.
      expect(closedEarly).toBe(true);
      expect(bytes).toBeLessThan(40 * MB);
      await expect(ended).rejects.toThrow(/sent an event over 65536 bytes/);
      expect(reports).toEqual([]);
    },
  );

  it('a probe of a 40 MB body reads none of it: healthy, connection closed, heap flat', async () => {
    const baseline = heapAfterGc();
    const verdict = await createHttpProbe({ method: 'GET' })(`${base}/big-body`, {
      provider: 'p',
      signal: new AbortController().signal,
    });
    const { bytes, closedEarly } = await sent;
    expect(heapAfterGc() - baseline).toBeLessThan(4 * MB);
    expect(verdict).toMatchObject({ healthy: true });
    expect(closedEarly).toBe(true);
    expect(bytes).toBeLessThan(40 * MB);
  });

  it('a watch keeps up with 10,000 events a second, reporting each, heap flat', async () => {
    const baseline = heapAfterGc();
    const { reports, ac, ended } = startWatch('/fast');
    await sent;
    await expect.poll(() => reports.length).toBe(10_000);
    const grown = heapAfterGc() - baseline;
    ac.abort(new Error('test over'));
    await expect(ended).rejects.toThrow();
    expect(reports.every((healthy) => healthy)).toBe(true);
    expect(grown).toBeLessThan(4 * MB);
  });
});
