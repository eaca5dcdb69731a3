import Database from 'better-sqlite3';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {createDocFile} from '../src/doc/index.js';
import {fixturePath, tempPath as newDocPath, withFixtures} from './doc-helpers.js';

const ftest = withFixtures(test);

function schemaOf(path: string): Map<string, string> {
  const db = new Database(path, {readonly: true});
  try {
    const rows = db.prepare(`SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL`).all() as Array<{
      name: string;
      sql: string;
    }>;
    return new Map(rows.map((r) => [r.name, r.sql]));
  } finally {
    db.close();
  }
}

ftest('created doc has the DDL of Hello.grist for every _grist_/_gristsys_ table and index', () => {
  const path = newDocPath();
  createDocFile(path);
  const ours = schemaOf(path);
  const hello = schemaOf(fixturePath('Hello.grist'));
  hello.delete('Table1');
  const oursMeta = new Map([...ours].filter(([name]) => name !== 'Table1'));
  assert.equal([...oursMeta.keys()].sort(), [...hello.keys()].sort());
  for (const [name, sql] of hello) {
    assert.is(oursMeta.get(name), sql, name);
  }
});

test('created doc: DocInfo, storage version and Table1 as AddEmptyTable makes it', () => {
  const path = newDocPath();
  createDocFile(path, {timezone: 'Europe/Paris'});
  const db = new Database(path, {readonly: true});
  try {
    assert.is(db.pragma('user_version', {simple: true}), 9);
    assert.equal(db.prepare('SELECT * FROM _grist_DocInfo').all(), [
      {
        id: 1,
        docId: '',
        peers: '',
        schemaVersion: 46,
        basketId: '',
        timezone: 'Europe/Paris',
        documentSettings: '{"locale":"en-US"}',
      },
    ]);
    assert.equal(db.prepare('SELECT * FROM _grist_Tables').all(), [
      {
        id: 1,
        tableId: 'Table1',
        primaryViewId: 1,
        summarySourceTable: 0,
        onDemand: 0,
        rawViewSectionRef: 2,
        recordCardViewSectionRef: 3,
      },
    ]);
    const cols = db
      .prepare(`SELECT colId, type, isFormula, formula, label, parentPos,
      typeof(isFormula) AS t FROM _grist_Tables_column ORDER BY id`)
      .all();
    assert.equal(cols, [
      {
        colId: 'manualSort',
        type: 'ManualSortPos',
        isFormula: 0,
        formula: '',
        label: 'manualSort',
        parentPos: 1,
        t: 'integer',
      },
      {colId: 'A', type: 'Any', isFormula: 1, formula: '', label: 'A', parentPos: 2, t: 'integer'},
      {colId: 'B', type: 'Any', isFormula: 1, formula: '', label: 'B', parentPos: 3, t: 'integer'},
      {colId: 'C', type: 'Any', isFormula: 1, formula: '', label: 'C', parentPos: 4, t: 'integer'},
    ]);
    assert.equal(db.prepare('SELECT id, parentId, parentKey, title FROM _grist_Views_section').all(), [
      {id: 1, parentId: 1, parentKey: 'record', title: ''},
      {id: 2, parentId: 0, parentKey: 'record', title: ''},
      {id: 3, parentId: 0, parentKey: 'single', title: ''},
    ]);
    assert.equal(db.prepare('SELECT parentId, colRef FROM _grist_Views_section_field').all().length, 9);
    assert.equal(db.prepare('SELECT viewRef, pagePos, indentation FROM _grist_Pages').all(), [
      {viewRef: 1, pagePos: 1, indentation: 0},
    ]);
    assert.equal(db.prepare('SELECT viewRef FROM _grist_TabBar').all(), [{viewRef: 1}]);
    assert.equal(
      db
        .prepare("SELECT name FROM pragma_table_info('Table1')")
        .all()
        .map((r: any) => r.name),
      ['id', 'manualSort', 'A', 'B', 'C'],
    );
    assert.equal(db.prepare('SELECT count(*) AS n FROM Table1').get(), {n: 0});
  } finally {
    db.close();
  }
});

test('createDocFile refuses to overwrite', () => {
  const path = newDocPath();
  createDocFile(path);
  assert.throws(() => createDocFile(path), /already exists/);
});

test.run();
