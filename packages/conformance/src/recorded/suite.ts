/**
 * The `recorded` conformance area: every scenario replayed against a gristlite target and compared
 * with Grist 1.7.17's recorded answers (issue 38). One world for all scenarios, as when recorded.
 */
import {areaSuite, type Target, useWorld, type World} from '../world.js';
import {describeDifference} from './compare.js';
import {DIFFERENCES, PATH_DIFFERENCES} from './differences.js';
import {readGolden} from './golden.js';
import {type Scenario, SCENARIOS} from './scenarios/index.js';
import {type Golden, Session} from './session.js';

/** The three test users of a world, as a session knows them. */
export function worldUsers(w: World): Session['users'] {
  const u = (x: World['chimpy']) => ({email: x.email, name: x.name, key: x.key});
  return {chimpy: u(w.chimpy), kiwi: u(w.kiwi), charon: u(w.charon)};
}

/**
 * Settings of the replay's server that match the recording Grist's: webhooks may reach the local
 * receiver (Grist ran with `ALLOWED_WEBHOOK_DOMAINS=*`, which lets it reach 127.0.0.1; gristlite
 * needs loopback named, since its `*` means public hosts only).
 */
export const RECORDED_ENV: Record<string, string> = {GRISTLITE_ALLOWED_WEBHOOK_DOMAINS: '*,127.0.0.1'};

/**
 * Replays one scenario on `world` against its recording; returns one line per difference not
 * listed, step recorded but not run, and listing gone stale (none: it answers as Grist did).
 */
export async function replayScenario(world: World, scenario: Scenario, golden: Golden): Promise<string[]> {
  const session = new Session(
    scenario.name,
    'replay',
    world.api,
    worldUsers(world),
    golden,
    DIFFERENCES,
    PATH_DIFFERENCES,
  );
  await scenario.run(session);
  const lines = session.unexpected.map((d) => `  ${d.step}: ${describeDifference(d)}`);
  for (const m of session.missing()) lines.push(`  ${m}: recorded but not run (record again)`);
  for (const st of session.stale) lines.push(`  ${st}: listed in differences.ts but answers as Grist did (remove it)`);
  return lines;
}

export function recordedSuite(target: Target): void {
  const s = areaSuite(target, 'recorded');
  const world = useWorld(s, target, RECORDED_ENV);
  for (const scenario of SCENARIOS) {
    s(scenario.name, async () => {
      const golden = readGolden(scenario.name);
      if (!golden) throw new Error(`no recording of scenario ${scenario.name}: record it against Grist (README)`);
      const lines = await replayScenario(world(), scenario, golden);
      if (lines.length)
        throw new Error(
          `${scenario.name}: ${lines.length} difference(s) from Grist ${golden.grist}:\n${lines.join('\n')}`,
        );
    });
  }
  s.run();
}
