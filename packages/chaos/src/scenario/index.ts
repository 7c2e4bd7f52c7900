export {
  type AnalyzeInput,
  type AttemptRecord,
  analyzeScenario,
  type CallRecord,
  type ClientReport,
  type PhaseStats,
  type ScenarioReport,
  type SecondPoint,
} from './analyze.js';
export {
  goodputPerSecond,
  type OfferCallsOptions,
  type OfferedCall,
  offerCalls,
} from './offered.js';
export {
  type OpenLoopOptions,
  type OpenLoopRequest,
  type OpenLoopResult,
  runOpenLoop,
} from './open-loop.js';
export {
  type LiveClientStats,
  type RunScenarioOptions,
  runScenario,
  type ScenarioCallResult,
  type ScenarioClient,
  type ScenarioProgress,
  type ScenarioRun,
} from './run-scenario.js';
export {
  type LatencySummary,
  median,
  pairedDifferences,
  pairedRatios,
  percentile,
  quantile,
  ratio,
  round,
  type Spread,
  sortedAscending,
  spread,
  summarizeLatency,
} from './stats.js';
export {
  type ChaosFault,
  type ChaosTarget,
  grpcChildTarget,
  grpcRulesFor,
  trpcPlanFor,
  trpcServerTarget,
} from './targets.js';
export {
  type PhaseKind,
  type PhaseWindow,
  runTimeline,
  type ScenarioPhase,
  type TimelineOptions,
  timelineDuration,
} from './timeline.js';
