/**
 * Replay outside uvu, for working through differences: every scenario against a fresh in-process
 * gristlite (node adapter), returning each scenario's differences as printable lines.
 */
import {nodeApiTarget} from '../targets.js';
import {startWorld} from '../world.js';
import {readGolden} from './golden.js';
import {SCENARIOS} from './scenarios/index.js';
import {RECORDED_ENV, replayScenario} from './suite.js';

/** Scenario name -> its steps and the lines of its differences (step, JSON path, both values). */
export async function replayScenarios(): Promise<Record<string, {steps: number; lines: string[]}>> {
  const world = await startWorld(nodeApiTarget('replay'), RECORDED_ENV);
  const out: Record<string, {steps: number; lines: string[]}> = {};
  try {
    // In order on one server, as recorded.
    for (const scenario of SCENARIOS) {
      const golden = readGolden(scenario.name);
      if (!golden) {
        out[scenario.name] = {steps: 0, lines: ['  not recorded']};
        continue;
      }
      const lines = await replayScenario(world, scenario, golden);
      out[scenario.name] = {steps: golden.steps.length, lines};
    }
  } finally {
    await world.server.close();
  }
  return out;
}
