#!/usr/bin/env node
// Records Grist's answers to the conformance scenarios (packages/conformance/golden/README.md):
//   node scripts/record-grist.mjs --url http://localhost:8484 --keys keys.json [--only a,b] [--out dir]
import {readFileSync} from 'node:fs';
import {parseArgs} from 'node:util';
import {Client} from '@gristlite/conformance';
import {recordScenarios, SCENARIOS} from '@gristlite/conformance/recorded';

const {values} = parseArgs({
  options: {url: {type: 'string'}, keys: {type: 'string'}, only: {type: 'string'}, out: {type: 'string'}},
});
if (!values.url || !values.keys) {
  console.error('usage: record-grist.mjs --url <grist url> --keys <keys.json> [--only a,b] [--out dir]');
  process.exit(2);
}
const keys = JSON.parse(readFileSync(values.keys, 'utf8'));
const only = values.only?.split(',');
const scenarios = only ? SCENARIOS.filter((s) => only.includes(s.name)) : SCENARIOS;
const counts = await recordScenarios(new Client(values.url.replace(/\/$/, '')), keys, scenarios, values.out);
for (const [name, n] of Object.entries(counts)) console.log(`${name}: ${n} steps`);
