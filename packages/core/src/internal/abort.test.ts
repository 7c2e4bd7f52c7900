import { describe, expect, it } from 'vitest';
import { DeadlineExceededError, isOperationAbortedError } from '../errors/index.js';
import { abortError } from './abort.js';

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
