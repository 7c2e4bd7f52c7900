import { describe, expect, it } from 'vitest';
import { assertBuiltPackages, sourceCompiledExports } from './dist-check.js';

describe('dist check', () => {
  it('names the exports whose source carries esbuild keepNames wrappers', () => {
    // Written as a string so no compiler in this test run adds or removes the wrapper.
    const wrapped = new Function(
      'return function outer() { const inner = __name(() => 1, "inner"); return inner; }',
    )();
    const plain = () => 1;
    expect(sourceCompiledExports({ wrapped, plain, value: 3 })).toEqual(['wrapped']);
    expect(() => assertBuiltPackages({ '@breakwater/x': { wrapped } })).toThrow(
      /@breakwater\/x was loaded from its TypeScript source .*wrapped/,
    );
    expect(() => assertBuiltPackages({ '@breakwater/x': { plain } })).not.toThrow();
  });
});
