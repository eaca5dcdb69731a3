/**
 * Access rules follow column and table renames, as Grist's data engine makes them follow
 * (`acl.py`, learned from its behaviour: a rule `rec.Owner != user.Email` reads `rec.Buyer` after
 * Owner is renamed Buyer, recorded from Grist 1.7.17): resources' column lists, user attributes'
 * lookup table and column, and in rule formulas `rec.COL` / `newRec.COL` of the rule's table and
 * `user.ATTR.COL` of the attribute's lookup table. Formulas are rewritten token by token, so the
 * rest of the text (spacing, comments) stays as the user wrote it.
 */
import {parsePredicateFormula} from './parse.js';
import {type Token, Tokenizer} from '@gristlite/formula';

/** The rule tables' rows as the rename reads them. */
export interface AclRows {
  resources: ReadonlyArray<{id: number; tableId: string; colIds: string}>;
  rules: ReadonlyArray<{id: number; resource: number; aclFormula: string; userAttributes: string}>;
}

/** What a rename changes: resources' colIds or tableId, rules' formula or user attributes, by id. */
export interface AclEdits {
  resources: Map<number, {colIds?: string; tableId?: string}>;
  rules: Map<number, {aclFormula?: string; userAttributes?: string}>;
}

type UserAttr = {name?: unknown; tableId?: unknown; lookupColId?: unknown};

function parseAttr(text: string): UserAttr | null {
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' ? (v as UserAttr) : null;
  } catch {
    return null;
  }
}

/** The edits that renaming column `from` of `tableId` to `to` implies. */
export function aclColumnRenames(rows: AclRows, tableId: string, from: string, to: string): AclEdits {
  const out: AclEdits = {resources: new Map(), rules: new Map()};
  const resourceTable = new Map(rows.resources.map((r) => [r.id, r.tableId]));
  for (const r of rows.resources) {
    if (r.tableId !== tableId || !r.colIds || r.colIds === '*') continue;
    const colIds = r.colIds
      .split(',')
      .map((c) => (c === from ? to : c))
      .join(',');
    if (colIds !== r.colIds) out.resources.set(r.id, {colIds});
  }
  // User attributes by name -> their lookup table (for user.ATTR.COL), and lookup columns renamed.
  const attrTables = new Map<string, string>();
  for (const rule of rows.rules) {
    const attr = rule.userAttributes ? parseAttr(rule.userAttributes) : null;
    if (!attr) continue;
    if (typeof attr.name === 'string' && typeof attr.tableId === 'string') attrTables.set(attr.name, attr.tableId);
    if (attr.tableId === tableId && attr.lookupColId === from) {
      out.rules.set(rule.id, {userAttributes: JSON.stringify({...attr, lookupColId: to})});
    }
  }
  for (const rule of rows.rules) {
    if (!rule.aclFormula) continue;
    const ruleTable = resourceTable.get(rule.resource);
    const aclFormula = renameInFormula(rule.aclFormula, from, to, (chain) => {
      if (chain.length === 2 && (chain[0] === 'rec' || chain[0] === 'newRec')) return ruleTable === tableId;
      if (chain.length === 3 && chain[0] === 'user') return attrTables.get(chain[1]) === tableId;
      return false;
    });
    if (aclFormula !== rule.aclFormula) out.rules.set(rule.id, {...out.rules.get(rule.id), aclFormula});
  }
  return out;
}

/** The edits that renaming table `from` to `to` implies: resources and user attributes' lookup table. */
export function aclTableRenames(rows: AclRows, from: string, to: string): AclEdits {
  const out: AclEdits = {resources: new Map(), rules: new Map()};
  for (const r of rows.resources) if (r.tableId === from) out.resources.set(r.id, {tableId: to});
  for (const rule of rows.rules) {
    const attr = rule.userAttributes ? parseAttr(rule.userAttributes) : null;
    if (attr?.tableId === from) out.rules.set(rule.id, {userAttributes: JSON.stringify({...attr, tableId: to})});
  }
  return out;
}

/**
 * `text` with the last name of every attribute chain `a.b(.c)` equal to `from` replaced by `to`,
 * where `renames(chain)` says the chain (names from the first) refers to the renamed column. A
 * formula that does not parse is left as it is (its rule is already broken; Grist leaves it too).
 */
function renameInFormula(text: string, from: string, to: string, renames: (chain: string[]) => boolean): string {
  if (!text.includes(from)) return text;
  const tokens: Token[] = [];
  try {
    parsePredicateFormula(text);
    const tz = new Tokenizer(text);
    for (let t = tz.next(); t.kind !== 'eof'; t = tz.next()) tokens.push(t);
  } catch {
    return text;
  }
  const cps = [...text];
  const at: number[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind !== 'name' || t.value !== from || i < 2 || tokens[i - 1].value !== '.') continue;
    // The chain of names joined by dots that ends here; a name after a dot cannot start one.
    const chain = [t.value];
    let j = i - 1;
    while (j >= 1 && tokens[j].value === '.' && tokens[j - 1].kind === 'name') {
      chain.unshift(tokens[j - 1].value);
      j -= 2;
    }
    if (j >= 0 && tokens[j].value === '.') continue;
    if (renames(chain)) at.push(t.offset);
  }
  for (const offset of at.reverse()) cps.splice(offset, [...from].length, to);
  return cps.join('');
}
