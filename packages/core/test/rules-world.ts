/**
 * Tests of reads under access rules (exports, aggregates): an engine in a temporary directory where
 * ada owns a document and kiwi edits it, with tables S and J holding `rows` (Owner, Val, Secret).
 * S: Secret hidden from all but owners, a row rule SQLite applies (rows of other owners); J: the
 * same row rule, and Secret censored where Val > 6, so that rows are checked one by one.
 */
import {mkdtempSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {Engine, type SessionDoc} from '../src/internal.js';

export const KIWI = 'kiwi@example.com';

export interface RulesWorld {
  engine: Engine;
  dir: string;
  ada: SessionDoc;
  kiwi: SessionDoc;
}

export async function rulesWorld(rows: Array<{Owner: string; Val: number; Secret: string}>): Promise<RulesWorld> {
  const dir = mkdtempSync(join(tmpdir(), 'gl-rules-'));
  const engine = await Engine.open({dataDir: dir, resumeWebhooks: false});
  const adaS = await engine.forUser('ada@example.com', 'Ada');
  const docId = await adaS.createDoc((await adaS.personalWorkspace()).id, {name: 'Rules'});
  await adaS.updateDocAccess(docId, {users: {[KIWI]: 'editors'}});
  const ada = await adaS.doc(docId);
  const cols = [
    {id: 'Owner', fields: {type: 'Text'}},
    {id: 'Val', fields: {type: 'Numeric'}},
    {id: 'Secret', fields: {type: 'Text'}},
  ];
  // S: a row rule SQLite tests; J: a column rule that depends on rows, checked row by row.
  await ada.addTables([
    {id: 'S', columns: cols},
    {id: 'J', columns: cols},
  ]);
  await ada.addRecords('S', rows);
  await ada.addRecords('J', rows);
  const owner = 'user.Access != OWNER and rec.Owner != user.Email';
  await ada.applyUserActions([
    ['AddRecord', '_grist_ACLResources', -1, {tableId: 'S', colIds: 'Secret'}],
    ['AddRecord', '_grist_ACLResources', -2, {tableId: 'S', colIds: '*'}],
    ['AddRecord', '_grist_ACLResources', -3, {tableId: 'J', colIds: 'Secret'}],
    ['AddRecord', '_grist_ACLResources', -4, {tableId: 'J', colIds: '*'}],
    ['AddRecord', '_grist_ACLRules', null, {resource: -1, aclFormula: 'user.Access != OWNER', permissionsText: '-R'}],
    ['AddRecord', '_grist_ACLRules', null, {resource: -2, aclFormula: owner, permissionsText: '-R'}],
    [
      'AddRecord',
      '_grist_ACLRules',
      null,
      {resource: -3, aclFormula: 'user.Access != OWNER and rec.Val > 6', permissionsText: '-R'},
    ],
    ['AddRecord', '_grist_ACLRules', null, {resource: -4, aclFormula: owner, permissionsText: '-R'}],
  ]);
  const kiwi = await (await engine.forUser(KIWI, 'Kiwi')).doc(docId);
  return {engine, dir, ada, kiwi};
}
