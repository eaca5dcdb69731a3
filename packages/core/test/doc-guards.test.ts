// Issue 11 guards in the engine itself (no HTTP): input checks, metadata write rules, identifiers.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc, META_TYPES, pickTableIdent} from '../src/doc/index.js';
import {checkInput, MAX_INPUT_DEPTH} from '../src/doc/gristdoc.js';
import {checkMetaWrite, META_WRITE_RULES} from '../src/doc/metarules.js';
import {tempPath} from './doc-helpers.js';

const status = (fn: () => unknown): number | undefined => {
  try {
    fn();
  } catch (e) {
    return (e as {status?: number}).status;
  }
  return undefined;
};

/** `depth` nested lists around a number. */
function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) {
    v = ['L', v];
  }
  return v;
}

test('checkInput: JSON-shaped values up to MAX_INPUT_DEPTH levels; anything else is 400', () => {
  checkInput(nested(MAX_INPUT_DEPTH));
  checkInput({a: [1, 'x', true, null, {b: [2]}]});
  assert.is(
    status(() => checkInput(nested(MAX_INPUT_DEPTH + 1))),
    400,
  );
  assert.is(
    status(() => checkInput(nested(100000))),
    400,
    'no stack overflow however deep',
  );
  assert.is(
    status(() => checkInput([1n])),
    400,
  );
  assert.is(
    status(() => checkInput({d: new Date()})),
    400,
  );
  assert.is(
    status(() => checkInput([() => 1])),
    400,
  );
  assert.is(
    status(() => checkInput({s: Symbol('x')})),
    400,
  );
});

test('every _grist_ metadata table has a write rule; writes without one are refused', () => {
  for (const tableId of Object.keys(META_TYPES)) {
    if (tableId.startsWith('_grist_')) {
      assert.ok(META_WRITE_RULES[tableId], `${tableId} has a rule`);
    }
  }
  assert.is(
    status(() => checkMetaWrite('_gristsys_ActionHistory', 'add', [], 'owners')),
    403,
  );
  assert.is(
    status(() => checkMetaWrite('_grist_Unknown', 'update', [], 'owners')),
    403,
  );
  assert.is(
    status(() => checkMetaWrite('_grist_ACLRules', 'add', [], 'editors')),
    403,
  );
  assert.is(
    status(() => checkMetaWrite('_grist_ACLRules', 'add', [], 'owners')),
    undefined,
  );
  assert.is(
    status(() => checkMetaWrite('_grist_Views', 'update', ['name'], 'editors')),
    undefined,
  );
  assert.is(
    status(() => checkMetaWrite('_grist_Attachments', 'update', ['fileName'], 'editors')),
    undefined,
  );
  assert.is(
    status(() => checkMetaWrite('_grist_Attachments', 'update', ['fileSize'], 'owners')),
    403,
  );
  assert.is(
    status(() => checkMetaWrite('_grist_DocInfo', 'update', ['schemaVersion'], 'owners')),
    400,
  );
});

test('GristDoc writes as owners by default and as the role it is given', () => {
  const doc = GristDoc.create(tempPath());
  assert.is(
    status(() => doc.applyUserActions([['AddRecord', '_grist_Triggers', null, {tableRef: 1}]], {role: 'editors'})),
    403,
  );
  assert.is(
    status(() => doc.addRecords('_grist_ACLRules', [{aclFormula: 'True'}], {role: 'editors'})),
    403,
  );
  assert.is(
    status(() => doc.removeRecords('_grist_ACLRules', [1], {role: 'editors'})),
    403,
  );
  assert.equal(doc.fetchColumns('_grist_Triggers').id, []);
  const [id] = doc.applyUserActions([['AddRecord', '_grist_Triggers', null, {tableRef: 1}]]).retValues as number[];
  assert.equal(doc.fetchColumns('_grist_Triggers').id, [id]);
  doc.close();
});

test('table ids never start with sqlite_ (reserved by SQLite); row id 0 is refused', () => {
  assert.is(pickTableIdent('sqlite_master', []), 'TSqlite_master');
  assert.is(pickTableIdent('  SQLITE_x', []), 'TSQLITE_x');
  assert.is(pickTableIdent('sqlitex', []), 'Sqlitex');
  const doc = GristDoc.create(tempPath());
  assert.equal(doc.addTables([{id: 'sqlite_stat1', columns: [{id: 'A'}]}]), [{id: 'TSqlite_stat1'}]);
  assert.is(
    status(() => doc.applyUserActions([['AddRecord', 'Table1', 0, {}]])),
    400,
  );
  assert.is(
    status(() => doc.upsertRecords('Table1', [{require: {id: 0}}])),
    400,
  );
  assert.equal(doc.fetchRecords('Table1').records, []);
  doc.close();
});

test.run();
