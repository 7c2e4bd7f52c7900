import { describe, expect, it } from 'vitest';
import {
  forwardOutcome,
  newPromiseInto,
  noSettler,
  type OutcomeSink,
  type Settlers,
} from './settle.js';

function sink(): OutcomeSink & { seen: [boolean, unknown][] } {
  const seen: [boolean, unknown][] = [];
  return { seen, onOutcome: (ok, value) => seen.push([ok, value]) };
}

const ticks = async (n = 3) => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

describe('forwardOutcome', () => {
  it('reports a value and an error, each once, never synchronously', async () => {
    const s = sink();
    forwardOutcome(s, Promise.resolve(1));
    forwardOutcome(s, Promise.reject(new Error('x')));
    expect(s.seen).toEqual([]);
    await ticks();
    expect(s.seen).toEqual([
      [true, 1],
      [false, new Error('x')],
    ]);
  });

  it('watches a native promise as await does: a then patched on the instance is not called', async () => {
    const s = sink();
    const p = Promise.resolve(2);
    let patchedCalls = 0;
    Object.defineProperty(p, 'then', {
      value: () => {
        patchedCalls++;
        throw new Error('patched then');
      },
    });
    forwardOutcome(s, p);
    await ticks();
    expect(patchedCalls).toBe(0);
    expect(s.seen).toEqual([[true, 2]]);
  });

  it('reports a constructor getter that throws as a failure, later, as await does', async () => {
    const s = sink();
    const p = Promise.resolve(3);
    const error = new Error('constructor getter');
    Object.defineProperty(p, 'constructor', {
      get() {
        throw error;
      },
    });
    expect(() => forwardOutcome(s, p)).not.toThrow();
    expect(s.seen).toEqual([]);
    await ticks();
    expect(s.seen).toEqual([[false, error]]);
  });

  it('adopts a foreign thenable, and reports a then that throws as a failure', async () => {
    const s = sink();
    const thenable = {
      // biome-ignore lint/suspicious/noThenProperty: the foreign thenable under test.
      then: (ok: (v: number) => void) => ok(4),
    };
    forwardOutcome(s, thenable as unknown as PromiseLike<number>);
    const error = new Error('then throws');
    const hostile = {
      // biome-ignore lint/suspicious/noThenProperty: the hostile thenable under test.
      then: () => {
        throw error;
      },
    };
    forwardOutcome(s, hostile as unknown as PromiseLike<number>);
    await ticks(4);
    expect(s.seen).toEqual([
      [true, 4],
      [false, error],
    ]);
  });
});

describe('newPromiseInto', () => {
  it('writes the new promise’s settlers into the holder it is given, and only there', async () => {
    const a: Settlers<number> = { resolve: noSettler, reject: noSettler };
    const b: Settlers<number> = { resolve: noSettler, reject: noSettler };
    const pa = newPromiseInto(a);
    const pb = newPromiseInto(b);
    expect(a.resolve).not.toBe(b.resolve);
    a.resolve(1);
    b.reject(new Error('b'));
    await expect(pa).resolves.toBe(1);
    await expect(pb).rejects.toThrow('b');
  });
});
