import { describe, expect, it } from 'vitest';
import { DeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { DeadlineTimerError } from '../errors/deadline-timer-error.js';
import { OperationAbortedError } from '../errors/operation-aborted-error.js';
import { createTransientErrorPredicate, isTransientError } from './transient.js';

const withProps = (props: Record<string, unknown>, message = 'boom') =>
  Object.assign(new Error(message), props);
const named = (name: string, message = 'boom') => {
  const e = new Error(message);
  e.name = name;
  return e;
};

describe('isTransientError — one case per default rule', () => {
  const cases: [string, unknown, boolean][] = [
    ['name AbortError', named('AbortError'), true],
    ['name TimeoutError', named('TimeoutError'), true],
    ['DeadlineExceededError', new DeadlineExceededError(100), true],
    ["code 'TIMEOUT'", withProps({ code: 'TIMEOUT' }), true],
    ['message "request timeout"', new Error('Request Timeout while calling upstream'), true],
    ['statusCode 503', withProps({ statusCode: 503 }), true],
    ['status 500', withProps({ status: 500 }), true],
    ['response.status 502', withProps({ response: { status: 502 } }), true],
    ['NETWORK_ERROR', withProps({ code: 'NETWORK_ERROR' }), true],
    ['ECONNREFUSED', withProps({ code: 'ECONNREFUSED' }), true],
    ['ECONNRESET', withProps({ code: 'ECONNRESET' }), true],
    ['ETIMEDOUT', withProps({ code: 'ETIMEDOUT' }), true],
    [
      'fetch failed with a network cause',
      new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } }),
      true,
    ],
    ['status 400', withProps({ status: 400 }), false],
    ['status 404', withProps({ statusCode: 404 }), false],
    ['409 conflict', withProps({ status: 409 }), false],
    ['429 (a 4xx)', withProps({ response: { status: 429 } }), false],
    [
      'status wins over a timeout name',
      Object.assign(named('TimeoutError'), { status: 400 }),
      false,
    ],
    ['status wins over a network code', withProps({ code: 'ECONNRESET', status: 404 }), false],
    [
      'status 503 wins over a ZodError name',
      Object.assign(named('ZodError'), { status: 503 }),
      true,
    ],
    ['ZodError', named('ZodError'), false],
    ['OperationAbortedError', new OperationAbortedError(), false],
    ['DeadlineTimerError', new DeadlineTimerError(new Error('sleep broke')), false],
    ['unknown Error', new Error('something'), false],
    ['string throw', 'ECONNRESET', false],
    ['plain object with a status', { status: 503 }, false],
    ['undefined', undefined, false],
    ['null', null, false],
  ];
  it.each(cases)('%s → %s', (_label, error, expected) => {
    expect(isTransientError(error)).toBe(expected);
  });
});

describe('createTransientErrorPredicate', () => {
  it('isConflict is checked first and wins', () => {
    const conflict = withProps({ status: 503, conflict: true });
    const p = createTransientErrorPredicate({
      isConflict: (e) => (e as { conflict?: boolean }).conflict === true,
    });
    expect(p(conflict)).toBe(false);
    expect(p(withProps({ status: 503 }))).toBe(true);
  });

  it('retryableCodes add codes and status numbers over the defaults', () => {
    const p = createTransientErrorPredicate({ retryableCodes: ['EAI_AGAIN', 429] });
    expect(p(withProps({ code: 'EAI_AGAIN' }))).toBe(true);
    expect(p(withProps({ status: 429 }))).toBe(true);
    expect(p(withProps({ status: 404 }))).toBe(false);
    expect(p(withProps({ code: 'ECONNRESET' }))).toBe(true);
  });

  it('retryUnknown retries unrecognised errors but never permanent ones', () => {
    const p = createTransientErrorPredicate({ retryUnknown: true });
    expect(p(new Error('mystery'))).toBe(true);
    expect(p('thrown string')).toBe(true);
    expect(p(withProps({ status: 409 }))).toBe(false);
    expect(p(named('ZodError'))).toBe(false);
    expect(p(new OperationAbortedError())).toBe(false);
    expect(createTransientErrorPredicate()(new Error('mystery'))).toBe(false);
  });

  it('rejects invalid options naming them', () => {
    expect(() => createTransientErrorPredicate({ isConflict: 1 as never })).toThrow(
      /isConflict must be a function/,
    );
    expect(() => createTransientErrorPredicate({ retryableCodes: 'x' as never })).toThrow(
      /retryableCodes/,
    );
    expect(() => createTransientErrorPredicate({ retryableCodes: [1.5] })).toThrow(
      /retryableCodes/,
    );
    expect(() => createTransientErrorPredicate({ retryUnknown: 'yes' as never })).toThrow(
      /retryUnknown must be a boolean/,
    );
  });
});
