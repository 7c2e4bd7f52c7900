// `pnpm demo:screenshots` — runs `pnpm demo --quick` (or takes `--report <file>`) and
// screenshots the report at 375 px and 1400 px with the system's headless Chromium
// into demo-screenshots/ (ignored by git). See examples/demo/src/screenshots.ts.
import { runDemoEntry } from './run-ts.mjs';

runDemoEntry('screenshots.ts');
