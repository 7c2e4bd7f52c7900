import { describe, expect, it } from 'vitest';
import { isOperationAbortedError } from '../errors/operation-aborted-error.js';
import { type ProbeContext, runProbe } from './probe.js';

const ctx = (signal = new AbortController().signal): ProbeContext => ({ provider: 'p', signal });

describe('runProbe', () => {
  it('resolving with nothing is healthy; a result object is taken as is', async () => {
    await expect(runProbe(async () => {}, 'x', ctx())).resolves.toEqual({
      healthy: true,
      reason: 'ok',
    });
    await expect(
      runProbe(async () => ({ healthy: true, reason: 'fine' }), 'x', ctx()),
    ).resolves.toEqual({
      healthy: true,
      reason: 'fine',
    });
    await expect(runProbe(async () => ({ healthy: false }), 'x', ctx())).resolves.toEqual({
      healthy: false,
      reason: 'unhealthy',
    });
  });

  it('a rejection is unhealthy with the error message as reason', async () => {
    const failing = async () => {
      throw new Error('connect ECONNREFUSED');
    };
    await expect(runProbe(failing, 'x', ctx())).resolves.toEqual({
      healthy: false,
      reason: 'connect ECONNREFUSED',
    });
    await expect(runProbe(() => Promise.reject('plain'), 'x', ctx())).resolves.toEqual({
      healthy: false,
      reason: 'plain',
    });
  });

  it('passes target and context through', async () => {
    const c = ctx();
    let seen: unknown[] = [];
    await runProbe(
      async (t, k) => {
        seen = [t, k.provider, k.signal];
      },
      42,
      c,
    );
    expect(seen).toEqual([42, 'p', c.signal]);
  });

  it('rejects with the abort reason when the signal aborted, whatever the probe said', async () => {
    const ac = new AbortController();
    const reason = new Error('stopped');
    const p = runProbe(
      async () => {
        ac.abort(reason);
      },
      'x',
      ctx(ac.signal),
    );
    await expect(p).rejects.toBe(reason);
    const ac2 = new AbortController();
    const q = runProbe(
      async () => {
        ac2.abort();
        throw new Error('cut');
      },
      'x',
      ctx(ac2.signal),
    );
    // No reason given: a bare abort() is plain cancellation.
    await expect(q).rejects.toSatisfy(isOperationAbortedError);
    const ac3 = new AbortController();
    const r = runProbe(
      async () => {
        ac3.abort('not an error');
      },
      'x',
      ctx(ac3.signal),
    );
    await expect(r).rejects.toSatisfy(isOperationAbortedError);
  });
});
