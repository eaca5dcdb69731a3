/**
 * Grist as the oracle (issue 38): scenarios run against Grist 1.7.17 to record its answers
 * (`recordScenarios`), replayed against gristlite by the `recorded` conformance area.
 */
export {compareAnswers, describeDifference, type Answer, type Difference, type Level} from './compare.js';
export {DIFFERENCES, PATH_DIFFERENCES} from './differences.js';
export {GRIST_VERSION, goldenDir, readGolden, writeGolden} from './golden.js';
export {Normaliser} from './normalise.js';
export {recordScenarios, USERS} from './record.js';
export {SCENARIOS, type Scenario} from './scenarios/index.js';
export {
  Session,
  type Golden,
  type ListedDifference,
  type PathDifference,
  type RecordedStep,
  type Who,
} from './session.js';
export {RECORDED_ENV, recordedSuite, worldUsers} from './suite.js';
export {replayScenarios} from './replay.js';
