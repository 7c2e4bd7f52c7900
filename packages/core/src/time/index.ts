// @breakwater/core/time — the injected time and randomness every building block
// takes (`clock`, `sleep`, `random` options), and the doubles for tests.

export { type Clock, monotonicClock, systemClock } from './clock.js';
export { createManualClock, type ManualClock } from './manual-clock.js';
export { fixedRandom, type RandomSource, sequenceRandom, systemRandom } from './random.js';
export { type Sleep, systemSleep } from './sleep.js';
