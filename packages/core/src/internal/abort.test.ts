import { describe, expect, it } from 'vitest';
import { DeadlineExceededError, isOperationAbortedError } from '../errors/index.js';
import { abortError, allowUnboundedListeners, neverAbortedSignal } from './abort.js';

describe('abortError', () => {
  it('passes an Error reason through unchanged', () => {
    const reason = new DeadlineExceededError(100);
    const ac = new AbortController();
    ac.abort(reason);
    expect(abortError(ac.signal)).toBe(reason);
  });

  it('turns a non-Error reason into OperationAbortedError with the reason as cause', () => {
    const ac = new AbortController();
    ac.abort('user left');
    const e = abortError(ac.signal);
    expect(isOperationAbortedError(e)).toBe(true);
    expect(e.cause).toBe('user left');
  });

  it('treats the platform default reason of a bare abort() as cancellation', () => {
    const ac = new AbortController();
    ac.abort();
    const e = abortError(ac.signal);
    expect(isOperationAbortedError(e)).toBe(true);
    expect((e.cause as Error).name).toBe('AbortError');
  });

  it('keeps a TimeoutError from AbortSignal.timeout-style reasons', () => {
    const ac = new AbortController();
    const reason = new DOMException('timed out', 'TimeoutError');
    ac.abort(reason);
    expect(abortError(ac.signal)).toBe(reason);
  });
});

/** Names of the process warnings emitted while 11 listeners sit on `signal`. */
async function warningsWith11Listeners(signal: AbortSignal): Promise<string[]> {
  const seen: string[] = [];
  const onWarning = (w: Error) => seen.push(w.name);
  const listeners = Array.from({ length: 11 }, () => () => {});
  process.on('warning', onWarning);
  try {
    for (const l of listeners) signal.addEventListener('abort', l);
    // Node emits the warning on a later tick.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    for (const l of listeners) signal.removeEventListener('abort', l);
    process.off('warning', onWarning);
  }
  return seen;
}

describe('allowUnboundedListeners', () => {
  it('lifts the listener warning on the shared never-aborted signal without importing node:events', async () => {
    expect(await warningsWith11Listeners(neverAbortedSignal)).toEqual([]);
    const signal = new AbortController().signal;
    allowUnboundedListeners(signal);
    expect(await warningsWith11Listeners(signal)).toEqual([]);
    // Control: the same load on a plain signal does warn, so the checks above can fail.
    expect(await warningsWith11Listeners(new AbortController().signal)).toEqual([
      'MaxListenersExceededWarning',
    ]);
  });
});
