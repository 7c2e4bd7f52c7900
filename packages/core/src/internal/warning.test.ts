import { afterEach, describe, expect, it, vi } from 'vitest';
import { reportWarning } from './warning.js';

const warning = { code: 'no-idempotent-methods', message: 'retries are on' } as const;

describe('reportWarning', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('tells the listener every time and never lets it throw', () => {
    const heard: string[] = [];
    reportWarning((w) => heard.push(w.message), warning);
    reportWarning((w) => heard.push(w.message), warning);
    expect(heard).toEqual(['retries are on', 'retries are on']);
    expect(() =>
      reportWarning(() => {
        throw new Error('listener bug');
      }, warning),
    ).not.toThrow();
  });

  it('without a listener prints one process warning per code, however many clients are built', () => {
    const emit = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    for (let i = 0; i < 5; i++) reportWarning(undefined, warning);
    expect(emit).toHaveBeenCalledTimes(1);
    expect(emit).toHaveBeenCalledWith('retries are on', {
      code: 'BREAKWATER_NO_IDEMPOTENT_METHODS',
    });
  });
});
