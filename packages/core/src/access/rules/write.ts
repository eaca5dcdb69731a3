/**
 * Writes to the rule tables, as Grist's engine handles them: every rule's `aclFormulaParsed` is
 * (re)computed from its `aclFormula` with Grist's exact JSON text, and the resulting rule set must
 * be one Grist accepts (a syntax error, an unknown variable, a duplicate resource, a rule after the
 * default one, bad permission text answer 400 and the write is rolled back).
 */
import type Database from 'better-sqlite3';
import {ApiError, BadRequest, engineError} from '../../base/index.js';
import {PredicateFormulaError} from './errors.js';
import {parsePredicateFormula} from './parse.js';
import {RuleSet} from './ruleset.js';

/**
 * Brings `aclFormulaParsed` up to date for these rules, then checks the whole rule set (unless
 * `check` is false: recovery mode).
 */
export function refreshRules(db: Database.Database, ruleIds: readonly number[], opts: {check?: boolean} = {}): void {
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
  if (opts.check === false) return;
  let rules: RuleSet | null;
  try {
    rules = RuleSet.read(db);
  } catch (e) {
    if (e instanceof ApiError) throw new BadRequest(e.message, e.details);
    throw e;
  }
  if (rules) checkEntities(db, rules);
}

/**
 * Rules must name tables and columns that exist, and user attributes columns that exist (Grist's
 * findRuleProblems, checked when rules are written): the first problem answers 400 in its words.
 */
function checkEntities(db: Database.Database, rules: RuleSet): void {
  const columns = new Map<string, Set<string>>();
  for (const row of db
    .prepare(
      'SELECT t.tableId AS tableId, c.colId AS colId FROM _grist_Tables t LEFT JOIN _grist_Tables_column c ON c.parentId = t.id',
    )
    .all() as Array<{tableId: string; colId: string | null}>) {
    let cols = columns.get(row.tableId);
    if (!cols) columns.set(row.tableId, (cols = new Set()));
    if (row.colId) cols.add(row.colId);
  }
  const tables = rules.ruledTables();
  const missing = tables.filter((t) => !columns.has(t));
  if (missing.length) throw new BadRequest(`Invalid tables in rules: ${missing.join(', ')}`);
  for (const tableId of tables) {
    for (const list of rules.columnRuleLists(tableId)) {
      const bad = (list.colIds as string[]).filter((c) => !columns.get(tableId)!.has(c));
      if (bad.length) throw new BadRequest(`Invalid columns in rules for table ${tableId}: ${bad.join(', ')}`);
    }
  }
  const badAttrs = rules.userAttributes
    .filter((a) => !columns.get(a.tableId)?.has(a.lookupColId))
    .map((a) => `${a.tableId}.${a.lookupColId}`);
  if (badAttrs.length) throw new BadRequest(`Invalid columns in User Attribute rules: ${badAttrs.join(', ')}`);
}
