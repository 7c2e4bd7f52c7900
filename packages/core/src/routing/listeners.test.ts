import { describe, expect, it } from 'vitest';
import { neverAbortedSignal } from '../internal/abort.js';
import { createManualClock } from '../time/manual-clock.js';
import { createRouter } from './router.js';

describe('router: abort listeners', () => {
  it('hedged calls without a caller signal leave no listener behind and warn nothing', async () => {
    const clock = createManualClock();
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const router = createRouter({
        providers: [
          { id: 'a', resource: 'a' },
          { id: 'b', resource: 'b' },
        ],
        hedge: { delayMs: 10, attempts: 2 },
        clock,
        sleep: clock.sleep,
      });
      const calls = Array.from({ length: 30 }, () =>
        router.execute((resource) => clock.sleep(5).then(() => resource)),
      );
      await clock.advanceAsync(20);
      await expect(Promise.all(calls)).resolves.toHaveLength(30);
      await new Promise((r) => setImmediate(r));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
      // The shared never-aborting signal must not collect listeners (none were kept).
      expect(clock.pending).toBe(0);
      expect(neverAbortedSignal.aborted).toBe(false);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
