import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ECHO_PROTO_SOURCE, startGrpcChaosServer } from '@breakwater/chaos';
import { status } from '@grpc/grpc-js';
import { describe, expect, it, vi } from 'vitest';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const example = /<!-- readme-example:start -->\s*```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';

describe('README example', () => {
  it('runs and prints the reply of the retried call', async () => {
    expect(example).toContain('resilienceInterceptor');
    // Run the example as a module inside this test, with package names mapped to sources by vitest.
    const dir = mkdtempSync(join(new URL('.', import.meta.url).pathname, '.readme-'));
    const file = join(dir, 'example.ts');
    writeFileSync(file, example);
    writeFileSync(join(dir, 'echo.proto'), ECHO_PROTO_SOURCE);
    // "Your server": it fails the first attempt of every call.
    const server = await startGrpcChaosServer({
      faults: [{ firstAttempts: 1, status: status.UNAVAILABLE }],
    });
    process.env.ECHO_ADDRESS = server.address;
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      await import(/* @vite-ignore */ file);
      await expect.poll(() => log.mock.calls.length).toBe(1);
      expect(server.attempts('readme')).toBe(2);
      expect(log).toHaveBeenCalledWith({
        message: 'hello',
        replica: 'replica-1',
        attempt: 2,
        index: 0,
      });
    } finally {
      log.mockRestore();
      delete process.env.ECHO_ADDRESS;
      await server.close();
      const { rmSync } = await import('node:fs');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
