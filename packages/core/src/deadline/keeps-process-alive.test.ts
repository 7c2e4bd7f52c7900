import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

// The child imports the core's sources through tsx (a dev dependency of the chaos package).
const tsx = pathToFileURL(
  createRequire(new URL('../../../chaos/package.json', import.meta.url)).resolve('tsx'),
).href;
const src = (path: string) => new URL(`../${path}`, import.meta.url).href;

/**
 * Runs `body` (an ES module body; `core` is the core's index, `attempt` the router's
 * attempt module) in a child `node` with no other handles, and returns its stdout
 * and exit status. A process that exits while a promise is pending would print nothing.
 */
function runChild(body: string): Promise<{ stdout: string; code: number | null }> {
  const script = `
    const core = await import(${JSON.stringify(src('index.ts'))});
    const attempt = await import(${JSON.stringify(src('routing/attempt.ts'))});
    const hang = () => new Promise(() => {});
    ${body}
  `;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', tsx, '--input-type=module', '--eval', script],
      // A child held open by a timer it should have released is killed, and fails below.
      { timeout: 15_000 },
      (error, stdout) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ stdout: stdout.trim(), code });
      },
    );
  });
}

const printError = (call: string) =>
  `await ${call}.then(() => console.log('resolved'), (e) => console.log(e.name));`;

describe('a pending deadline keeps the process alive', () => {
  it('withTimeout on a hung operation rejects with DeadlineExceededError instead of exiting', async () => {
    const { stdout, code } = await runChild(
      printError('core.withTimeout(hang, { timeoutMs: 20 })'),
    );
    expect(stdout).toBe('DeadlineExceededError');
    expect(code).toBe(0);
  });

  it('protect({ attemptTimeoutMs }) on a hung operation rejects with DeadlineExceededError instead of exiting', async () => {
    const { stdout, code } = await runChild(
      printError('core.protect({ attemptTimeoutMs: 20 })(hang)'),
    );
    expect(stdout).toBe('DeadlineExceededError');
    expect(code).toBe(0);
  });

  it("a router attempt's timeout on a hung operation rejects with DeadlineExceededError", async () => {
    const { stdout, code } = await runChild(
      printError(
        "attempt.attemptWithTimeout(hang, null, new AbortController().signal, 'p', 1, 20, false, (await import(" +
          JSON.stringify(src('deadline/timer-wheel.ts')) +
          ')).sharedTimerWheel)',
      ),
    );
    expect(stdout).toBe('DeadlineExceededError');
    expect(code).toBe(0);
  });

  it('a deadline whose call already settled no longer holds the process', async () => {
    // A 10-minute deadline: were it still held, the child would run into the kill timeout above.
    const { stdout, code } = await runChild(`
      await core.withTimeout(async () => 1, { timeoutMs: 600_000 });
      await core.protect({ attemptTimeoutMs: 600_000 })(async () => 1);
      console.log('done');
    `);
    expect(stdout).toBe('done');
    expect(code).toBe(0);
  });
});
