import { describe, expect, it } from 'vitest';
import { isQueueFullError } from '../errors/queue-full-error.js';
import { createManualClock } from '../time/manual-clock.js';
import { createRouter, shareLimiters } from './router.js';

describe('shareLimiters: twin routers over the same providers hold one bulkhead', () => {
  it("a twin takes its slots from the source's pool: a full pool refuses the twin's request", async () => {
    const clock = createManualClock();
    const options = {
      providers: [{ id: 'a', resource: 'a' }],
      concurrency: { limit: 1, maxQueue: 0 },
      clock,
      sleep: clock.sleep,
    };
    const source = createRouter(options);
    const twin = createRouter(options);
    shareLimiters(twin, source);

    const held = source.execute(() => clock.sleep(100).then(() => 'held'));
    const ran: string[] = [];
    const refused = twin.execute(async (id) => {
      ran.push(id);
      return id;
    });
    await expect(refused).rejects.toSatisfy(isQueueFullError);
    expect(ran).toEqual([]);
    await clock.advanceAsync(100);
    await expect(held).resolves.toBe('held');
    // The slot is back: the twin's next request runs.
    await expect(twin.execute(async (id) => id)).resolves.toBe('a');
  });
});
