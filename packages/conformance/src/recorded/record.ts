/**
 * Record mode: runs every scenario (or those named) against a running Grist and writes each one's
 * golden file. The server must be fresh (an empty home with the three test users and their keys),
 * since scenarios run in order on one server, as on replay.
 *
 *   node scripts/record-grist.mjs --url http://localhost:8484 --keys /path/to/keys.json [--only records]
 *
 * keys.json holds `{"chimpy": "<key>", "kiwi": "<key>", "charon": "<key>"}` of chimpy@getgrist.com,
 * kiwi@getgrist.com and charon@getgrist.com.
 */
import type {Client} from '../client.js';
import {GRIST_VERSION, writeGolden} from './golden.js';
import {type Scenario, SCENARIOS} from './scenarios/index.js';
import {Session} from './session.js';

/** The test users' emails and names, as the replay's world makes them. */
export const USERS = {
  chimpy: {email: 'chimpy@getgrist.com', name: 'Chimpy'},
  kiwi: {email: 'kiwi@getgrist.com', name: 'Kiwi'},
  charon: {email: 'charon@getgrist.com', name: 'Charon'},
} as const;

/** Runs the scenarios in record mode against `client`'s server; returns how many steps each recorded. */
export async function recordScenarios(
  client: Client,
  keys: Record<keyof typeof USERS, string>,
  scenarios: Scenario[] = SCENARIOS,
  dir?: string,
): Promise<Record<string, number>> {
  const users = {
    chimpy: {...USERS.chimpy, key: keys.chimpy},
    kiwi: {...USERS.kiwi, key: keys.kiwi},
    charon: {...USERS.charon, key: keys.charon},
  };
  const counts: Record<string, number> = {};
  for (const scenario of scenarios) {
    const session = new Session(scenario.name, 'record', client, users);
    await scenario.run(session);
    writeGolden({scenario: scenario.name, grist: GRIST_VERSION, steps: session.recorded}, dir);
    counts[scenario.name] = session.recorded.length;
  }
  return counts;
}
