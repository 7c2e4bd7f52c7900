import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const snippets = [
  ...readme.matchAll(
    /<!-- first-contact:([\w-]+):start -->([\s\S]*?)<!-- first-contact:\1:end -->/g,
  ),
];

describe("the root README's first-contact snippets copy into any project", () => {
  it('import relative files with their extension (nodenext needs it), and say how CommonJS runs top-level await', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(4);
    for (const [, name, body] of snippets) {
      const relative = [...(body as string).matchAll(/from '(\.\.?\/[^']+)'/g)].map((m) => m[1]);
      for (const spec of relative) expect(spec, `${name}: ${spec}`).toMatch(/\.js$/);
    }
    expect(snippets.some(([, , body]) => /^(?:console\.log\()?await /m.test(body as string))).toBe(
      true,
    );
    expect(readme).toMatch(
      /top-level `await`, which needs an ES module[\s\S]*async function main\(\)/,
    );
  });

  it("the adapters' READMEs: no `as never` casts, and a note on top-level await where the example uses it", () => {
    for (const name of ['grpc-js', 'nice-grpc', 'trpc']) {
      const text = readFileSync(new URL(`../packages/${name}/README.md`, import.meta.url), 'utf8');
      expect(text, name).not.toMatch(/as never as/);
      const relative = [...text.matchAll(/from '(\.\.?\/[^']+)'/g)].map((m) => m[1]);
      for (const spec of relative) expect(spec, `${name}: ${spec}`).toMatch(/\.js$/);
      if (/^(?:const \w+ = )?await /m.test(text)) {
        expect(text, name).toMatch(/top-level `await`[\s\S]*async function main\(\)/);
      }
    }
  });
});
