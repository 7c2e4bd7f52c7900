// `pnpm demo` — runs examples/demo from its TypeScript sources through tsx (no build step).
import { runDemoEntry } from './run-ts.mjs';

runDemoEntry('main.ts');
