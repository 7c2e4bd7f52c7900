/**
 * The bench measures what users install: each package's built `dist`
 * (tsc output), loaded through its `exports`. Run through tsx with the root
 * tsconfig's `paths`, `@breakwater/*` would load from `packages/*\/src`
 * instead, compiled by esbuild with `keepNames`, which wraps every named
 * closure in a `__name()` call each time it is created: a per-call cost no
 * user pays. `bench/tsconfig.json` (no `paths`) prevents that when the bench
 * runs from `bench/`; this check refuses a run that would measure source.
 */

/** The functions among `moduleExports` whose source shows esbuild's `__name()` wrapper. */
export function sourceCompiledExports(moduleExports: Readonly<Record<string, unknown>>): string[] {
  return Object.entries(moduleExports)
    .filter(([, value]) => typeof value === 'function' && String(value).includes('__name('))
    .map(([name]) => name);
}

/** Throws unless every module in `modules` (name → its exports) is the built `dist`. */
export function assertBuiltPackages(
  modules: Readonly<Record<string, Readonly<Record<string, unknown>>>>,
): void {
  for (const [name, exports] of Object.entries(modules)) {
    const compiled = sourceCompiledExports(exports);
    if (compiled.length > 0) {
      throw new Error(
        `${name} was loaded from its TypeScript source (esbuild's __name() in ${compiled.slice(0, 3).join(', ')}), not its built dist: run the bench from bench/ (pnpm bench), whose tsconfig.json has no paths`,
      );
    }
  }
}
