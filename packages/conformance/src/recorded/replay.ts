/**
 * Replay outside uvu, for working through differences: every scenario against a fresh in-process
 * gristlite (node adapter), returning each scenario's differences as printable lines.
 */
import {nodeApiTarget} from '../targets.js';
import {startWorld} from '../world.js';
import {describeDifference} from './compare.js';
import {DIFFERENCES, PATH_DIFFERENCES} from './differences.js';
import {readGolden} from './golden.js';
import {SCENARIOS} from './scenarios/index.js';
import {Session} from './session.js';
import {RECORDED_ENV, worldUsers} from './suite.js';

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
      const s = new Session(
        scenario.name,
        'replay',
        world.api,
        worldUsers(world),
        golden,
        DIFFERENCES,
        PATH_DIFFERENCES,
      );
      await scenario.run(s);
      const lines = s.unexpected.map((d) => `  ${d.step}: ${describeDifference(d)}`);
      for (const m of s.missing()) lines.push(`  ${m}: recorded but not run`);
      for (const st of s.stale) lines.push(`  ${st}: listed in differences.ts but answers as Grist did`);
      out[scenario.name] = {steps: golden.steps.length, lines};
    }
  } finally {
    await world.server.close();
  }
  return out;
}
