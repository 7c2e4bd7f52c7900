// Builds the package in the current directory to dual ESM + CJS with declarations
// using plain tsc, then marks the CJS folder as CommonJS for Node's resolver.
// No source maps: they would point at src/, which the tarball does not ship.
// The root LICENSE is copied in so every tarball carries it (`files` lists it).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const cwd = process.cwd();

rmSync(join(cwd, 'dist'), { recursive: true, force: true });
for (const config of ['tsconfig.build.json', 'tsconfig.cjs.json']) {
  execFileSync(
    process.execPath,
    [tsc, '-p', config, '--sourceMap', 'false', '--declarationMap', 'false'],
    { cwd, stdio: 'inherit' },
  );
}
mkdirSync(join(cwd, 'dist/cjs'), { recursive: true });
writeFileSync(join(cwd, 'dist/cjs/package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
copyFileSync(join(cwd, '../../LICENSE'), join(cwd, 'LICENSE'));
