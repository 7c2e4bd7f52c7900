export { type Clock, systemClock } from './clock.js';
export { createManualClock, type ManualClock } from './manual-clock.js';
export { fixedRandom, type RandomSource, sequenceRandom, systemRandom } from './random.js';
export { type Sleep, systemSleep } from './sleep.js';
