import { type ChildProcess, spawn } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { ProbeContext } from './probe.js';
import { createTcpProbe, tcpProbe } from './tcp-probe.js';

const ctx = (signal = new AbortController().signal): ProbeContext => ({ provider: 'p', signal });

const tcpHandles = () =>
  process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

// A listener in a child process whose event loop is blocked: the kernel queues
// handshakes up to the backlog, then drops SYNs, so a further connect hangs.
const FULL_BACKLOG = `
const s = require('node:net').createServer();
s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
  process.stdout.write(s.address().port + '\\n');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20000);
});`;

async function hangingListener(): Promise<{
  port: number;
  child: ChildProcess;
  fillers: net.Socket[];
}> {
  const child = spawn(process.execPath, ['-e', FULL_BACKLOG], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve) =>
    child.stdout?.once('data', (d) => resolve(Number(String(d).trim()))),
  );
  const fillers: net.Socket[] = [];
  // Fill the accept queue until a connect no longer completes.
  for (let i = 0; i < 10; i++) {
    const s = net.connect({ host: '127.0.0.1', port });
    fillers.push(s);
    s.on('error', () => {});
    const connected = await new Promise<boolean>((resolve) => {
      s.once('connect', () => resolve(true));
      s.once('error', () => resolve(false));
      AbortSignal.timeout(150).addEventListener('abort', () => resolve(false));
    });
    if (!connected) break;
  }
  return { port, child, fillers };
}

describe('tcpProbe', () => {
  it('passes when the port accepts, and destroys its socket at once', async () => {
    let closed = 0;
    const server = net.createServer((socket) => {
      // Accepts and never writes: connecting is all a TCP probe proves.
      socket.once('close', () => {
        closed += 1;
      });
    });
    try {
      const port = await listen(server);
      await expect(tcpProbe(`127.0.0.1:${port}`, ctx())).resolves.toEqual({
        healthy: true,
        reason: `connected to 127.0.0.1:${port}`,
      });
      await expect.poll(() => closed).toBe(1);
      await expect(tcpProbe({ host: '127.0.0.1', port }, ctx())).resolves.toMatchObject({
        healthy: true,
      });
      await expect.poll(() => closed).toBe(2);
    } finally {
      server.close();
    }
  });

  it('fails on a closed port', async () => {
    const server = net.createServer();
    const port = await listen(server);
    await new Promise((resolve) => server.close(resolve));
    await expect(tcpProbe(`127.0.0.1:${port}`, ctx())).resolves.toMatchObject({
      healthy: false,
      reason: expect.stringMatching(/ECONNREFUSED/),
    });
  });

  it('fails after its timeout when the connect hangs, leaving no socket behind', async () => {
    const { port, child, fillers } = await hangingListener();
    try {
      const before = tcpHandles();
      const probe = createTcpProbe({ timeoutMs: 100 });
      const started = performance.now();
      await expect(probe(`127.0.0.1:${port}`, ctx())).resolves.toEqual({
        healthy: false,
        reason: `connect to 127.0.0.1:${port} timed out after 100 ms`,
      });
      expect(performance.now() - started).toBeLessThan(1000);
      await expect.poll(tcpHandles).toBe(before);
    } finally {
      for (const s of fillers) s.destroy();
      child.kill();
    }
  });

  it('rejects with the abort reason when its signal aborts, leaving no socket behind', async () => {
    const { port, child, fillers } = await hangingListener();
    try {
      const before = tcpHandles();
      const ac = new AbortController();
      const pending = tcpProbe(`127.0.0.1:${port}`, ctx(ac.signal));
      const reason = new Error('stop');
      ac.abort(reason);
      await expect(pending).rejects.toBe(reason);
      await expect.poll(tcpHandles).toBe(before);
    } finally {
      for (const s of fillers) s.destroy();
      child.kill();
    }
  });

  it('parses IPv6 targets and rejects malformed ones as unhealthy', async () => {
    await expect(tcpProbe('no-port', ctx())).resolves.toEqual({
      healthy: false,
      reason: 'invalid TCP target no-port (expected "host:port")',
    });
    const server = net.createServer();
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '::1', () => resolve((server.address() as AddressInfo).port));
    }).catch(() => undefined);
    try {
      // Hosts without IPv6 loopback skip the connect half of this check.
      if (port !== undefined) {
        await expect(tcpProbe(`[::1]:${port}`, ctx())).resolves.toMatchObject({ healthy: true });
      }
    } finally {
      server.close();
    }
  });

  it('validates its options, naming them', () => {
    expect(() => createTcpProbe({ timeoutMs: -5 })).toThrow(/^timeoutMs must be/);
    expect(() => createTcpProbe({ timeoutMs: 'fast' as never })).toThrow(TypeError);
  });
});
