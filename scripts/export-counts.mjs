// Counts each package entry point's exported names, runtime values and types
// apart (a class or a const counts as a value; `export type` and interfaces as
// types), so the size of the public surface is a number a review can compare.
//   node scripts/export-counts.mjs [entry.ts ...]   (default: every package's src/index.ts)
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ts = createRequire(import.meta.url)('typescript');
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** A name exported with `export type { … }` is a type even when it aliases a value. */
function typeOnly(declaration) {
  return (
    declaration !== undefined &&
    ts.isExportSpecifier(declaration) &&
    (declaration.isTypeOnly || declaration.parent.parent.isTypeOnly)
  );
}

/** Each entry (a path from the repo root) with its exported names, values and types apart. */
export function countExports(entries) {
  const files = entries.map((p) => join(root, p));
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  return files.map((file) => {
    const module = checker.getSymbolAtLocation(program.getSourceFile(file));
    const exported = module ? checker.getExportsOfModule(module) : [];
    const values = [];
    const types = [];
    for (const symbol of exported) {
      const target =
        symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const isValue = target.flags & ts.SymbolFlags.Value && !typeOnly(symbol.declarations?.[0]);
      (isValue ? values : types).push(symbol.name);
    }
    return { entry: relative(root, file), values, types };
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const given = process.argv.slice(2);
  const entries = given.length
    ? given
    : readdirSync(join(root, 'packages')).map((p) => `packages/${p}/src/index.ts`);
  for (const { entry, values, types } of countExports(entries)) {
    const total = values.length + types.length;
    console.log(`${entry}: ${total} names (${values.length} values, ${types.length} types)`);
  }
}
