import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { protect } from '../protect/protect.js';
import { createRouter } from '../routing/router.js';
import { systemSleep } from '../time/sleep.js';
import { onAbort } from './on-abort.js';

/** The `MaxListenersExceededWarning`s emitted while `run` runs. */
async function listenerWarnings(run: () => Promise<void>): Promise<string[]> {
  const warnings: string[] = [];
  const onWarning = (w: Error) => {
    if (w.name === 'MaxListenersExceededWarning') warnings.push(w.message);
  };
  process.on('warning', onWarning);
  try {
    await run();
    // Node emits the warning on a later tick.
    await new Promise((r) => setImmediate(r));
    return warnings;
  } finally {
    process.off('warning', onWarning);
  }
}

const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

describe('onAbort', () => {
  it('calls each waiting function once, in order, and skips those that stopped', () => {
    const ac = new AbortController();
    const calls: string[] = [];
    onAbort(ac.signal, () => calls.push('a'));
    const stopB = onAbort(ac.signal, () => calls.push('b'));
    onAbort(ac.signal, () => calls.push('c'));
    stopB();
    expect(listeners(ac.signal)).toBe(1);
    ac.abort();
    ac.abort();
    expect(calls).toEqual(['a', 'c']);
    onAbort(ac.signal, () => calls.push('late'));
    expect(calls).toEqual(['a', 'c', 'late']);
    expect(listeners(ac.signal)).toBe(0);
  });

  it('systemSleep: 20 sleeps on one signal (lanes sharing a stop signal) add one listener', async () => {
    const stop = new AbortController();
    const warnings = await listenerWarnings(async () => {
      const sleeps = Array.from({ length: 20 }, () => systemSleep(60_000, stop.signal));
      expect(listeners(stop.signal)).toBe(1);
      stop.abort();
      await Promise.all(sleeps);
    });
    expect(warnings).toEqual([]);
    const again = new AbortController();
    await Promise.all(Array.from({ length: 20 }, () => systemSleep(1, again.signal)));
    expect(listeners(again.signal)).toBe(0);
  });

  it('protect and the router: 50 pending calls sharing one signal add one listener, none once settled', async () => {
    const ac = new AbortController();
    const runner = protect({ retry: false, circuit: false, concurrency: false, timeoutMs: 60_000 });
    const router = createRouter({
      providers: [
        { id: 'a', resource: 'a' },
        { id: 'b', resource: 'b' },
      ],
      hedge: { delayMs: 60_000, attempts: 2 },
    });
    const release: Array<() => void> = [];
    const pending = () => new Promise<string>((resolve) => release.push(() => resolve('ok')));
    const warnings = await listenerWarnings(async () => {
      const calls = [
        ...Array.from({ length: 50 }, () => runner(pending, { signal: ac.signal })),
        ...Array.from({ length: 50 }, () => router.execute(pending, { signal: ac.signal })),
      ];
      expect(release).toHaveLength(100);
      expect(listeners(ac.signal)).toBe(1);
      for (const r of release) r();
      await Promise.all(calls);
    });
    expect(warnings).toEqual([]);
    expect(listeners(ac.signal)).toBe(0);
  });
});
