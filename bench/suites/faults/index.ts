import type { Suite } from '../../harness/report.js';
import { killSuite } from './kill.js';
import { outageSuite } from './outage.js';
import { slowTailSuite } from './slow-tail.js';
import { transientSuite } from './transient.js';

/** The fault benchmarks, in the order `pnpm bench` runs them. */
export const faultSuites: Suite[] = [transientSuite, outageSuite, slowTailSuite, killSuite];
