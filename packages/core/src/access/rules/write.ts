/**
 * Writes to the rule tables, as Grist's engine handles them: every rule's `aclFormulaParsed` is
 * (re)computed from its `aclFormula` with Grist's exact JSON text, and the resulting rule set must
 * be one Grist accepts (a syntax error, an unknown variable, a duplicate resource, a rule after the
 * default one, bad permission text answer 400 and the write is rolled back).
 */
import type Database from 'better-sqlite3';
import {ApiError, BadRequest, engineError} from '../../errors.js';
import {PredicateFormulaError} from './errors.js';
import {parsePredicateFormula} from './parse.js';
import {RuleSet} from './ruleset.js';

/** Brings `aclFormulaParsed` up to date for these rules, then checks the whole rule set. */
export function refreshRules(db: Database.Database, ruleIds: readonly number[]): void {
  const cols = new Set(
    (db.prepare('pragma table_info("_grist_ACLRules")').all() as Array<{name: string}>).map((c) => c.name),
  );
  if (cols.has('aclFormula') && cols.has('aclFormulaParsed')) {
    const read = db.prepare('SELECT aclFormula, aclFormulaParsed FROM _grist_ACLRules WHERE id = ?');
    const write = db.prepare('UPDATE _grist_ACLRules SET aclFormulaParsed = ? WHERE id = ?');
    for (const id of ruleIds) {
      const row = read.get(id) as {aclFormula: unknown; aclFormulaParsed: unknown} | undefined;
      if (!row) continue;
      const formula = typeof row.aclFormula === 'string' ? row.aclFormula : '';
      let parsed: string;
      try {
        parsed = parsePredicateFormula(formula);
      } catch (e) {
        // Grist parses rule formulas in its data engine: its errors come back as the engine's.
        if (e instanceof PredicateFormulaError && e.excName) throw engineError(e.excName, e.detail);
        throw e;
      }
      if (parsed !== row.aclFormulaParsed) write.run(parsed, id);
    }
  }
  try {
    RuleSet.read(db);
  } catch (e) {
    if (e instanceof ApiError) throw new BadRequest(e.message, e.details);
    throw e;
  }
}
