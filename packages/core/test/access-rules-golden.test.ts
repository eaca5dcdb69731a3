// Golden test: every access-rule formula stored in the real Grist documents of the fixtures parses
// to exactly the aclFormulaParsed text Grist stored beside it (byte for byte).
import {readdirSync} from 'node:fs';
import {join} from 'node:path';
import Database from 'better-sqlite3';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {parsePredicateFormula} from '../src/access/rules/index.js';
import {copyFixture, findFixtures, withFixtures} from '../src/testing/fixtures.js';

const ftest = withFixtures(test, ['grist', 'corpus']);

interface Stored {
  doc: string;
  id: number;
  aclFormula: string;
  aclFormulaParsed: string;
}

/** The rules with both a formula and its parsed form, from a copy of each document. */
function storedFormulas(): {docs: number; rules: Stored[]} {
  const dirs = findFixtures();
  if (!dirs) throw new Error('no fixtures');
  const paths: string[] = [];
  for (const dir of [dirs.grist, dirs.corpus]) {
    if (!dir) continue;
    for (const f of readdirSync(dir).sort()) if (f.endsWith('.grist')) paths.push(join(dir, f));
  }
  const rules: Stored[] = [];
  let docs = 0;
  for (const path of paths) {
    const db = new Database(copyFixture(path), {readonly: true});
    try {
      const cols = (db.prepare(`PRAGMA table_info("_grist_ACLRules")`).all() as Array<{name: string}>).map(
        (c) => c.name,
      );
      // Documents from before access rules (schema < 29) have no aclFormulaParsed: nothing to compare.
      if (!cols.includes('aclFormula') || !cols.includes('aclFormulaParsed')) continue;
      docs++;
      const rows = db
        .prepare(`SELECT id, aclFormula, aclFormulaParsed FROM _grist_ACLRules ORDER BY id`)
        .all() as Array<{id: number; aclFormula: unknown; aclFormulaParsed: unknown}>;
      for (const r of rows) {
        if (typeof r.aclFormula !== 'string' || typeof r.aclFormulaParsed !== 'string') continue;
        if (!r.aclFormula || !r.aclFormulaParsed) continue;
        rules.push({
          doc: path.slice(path.lastIndexOf('/') + 1),
          id: r.id,
          aclFormula: r.aclFormula,
          aclFormulaParsed: r.aclFormulaParsed,
        });
      }
    } finally {
      db.close();
    }
  }
  return {docs, rules};
}

ftest("every stored aclFormula parses to Grist's stored aclFormulaParsed, byte for byte", () => {
  const {docs, rules} = storedFormulas();
  for (const r of rules) {
    assert.is(parsePredicateFormula(r.aclFormula), r.aclFormulaParsed, `${r.doc} rule ${r.id}: ${r.aclFormula}`);
  }
  console.log(`golden: ${rules.length} stored formulas checked, from ${docs} documents with access-rule tables`);
  // The fixtures hold rules with memos before and after the formula (Memos-v34), a row rule
  // (SelectionSummary) and a constant (Grist_Basics).
  assert.ok(rules.length >= 9, `only ${rules.length} stored formulas found`);
});

test.run();
