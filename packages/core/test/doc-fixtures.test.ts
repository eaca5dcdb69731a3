// Every fixture, every table: what GristDoc serves equals what is stored, decoded independently
// of the doc layer (plain SQL + the marshal decoder), plus values pinned literally.
import Database from 'better-sqlite3';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {type CellValue, GristDoc, marshalLoads} from '../src/doc/index.js';
import {copyFixture, FIXTURE_NAMES, withFixtures} from './doc-helpers.js';

const ftest = withFixtures(test);

function decodeStored(raw: unknown, type: string): CellValue {
  let v = raw instanceof Uint8Array ? (marshalLoads(raw) as CellValue) : (raw as CellValue);
  if (type === 'Bool' && (v === 0 || v === 1)) {
    v = v === 1;
  }
  const isList = type === 'ChoiceList' || type === 'Attachments' || type.startsWith('RefList:');
  if (isList && typeof v === 'string' && v.startsWith('[')) {
    v = ['L', ...JSON.parse(v)];
  }
  return v;
}

/** The stored table as {id: [...], colId: [...]}, with Grist types read straight from metadata. */
function storedColumns(path: string, tableId: string): Record<string, CellValue[]> {
  const db = new Database(path, {readonly: true});
  try {
    const types = new Map(
      (
        db
          .prepare(`SELECT c.colId, c.type FROM _grist_Tables_column c
      JOIN _grist_Tables t ON c.parentId = t.id WHERE t.tableId = ?`)
          .all(tableId) as any[]
      ).map((r) => [r.colId, r.type]),
    );
    const rows = db.prepare(`SELECT * FROM "${tableId}" ORDER BY id`).all() as Array<Record<string, unknown>>;
    const out: Record<string, CellValue[]> = {id: rows.map((r) => r.id as number)};
    for (const [colId, type] of types) {
      if (rows.length && !(colId in rows[0])) {
        continue;
      }
      out[colId] = rows.map((r) => decodeStored(r[colId], type));
    }
    return out;
  } finally {
    db.close();
  }
}

for (const name of FIXTURE_NAMES) {
  ftest(`${name}: /data and /records serve exactly the stored values of every table`, () => {
    const path = copyFixture(name);
    const doc = GristDoc.open(path);
    try {
      const tables = doc.listTables();
      assert.ok(tables.length > 0);
      for (const {id} of tables) {
        const stored = storedColumns(path, id);
        const data = doc.fetchColumns(id);
        assert.equal(Object.keys(data).sort(), Object.keys(stored).sort(), `${id} columns`);
        for (const key of Object.keys(stored)) {
          assert.equal(data[key], stored[key], `${id}.${key}`);
        }

        const hidden = new Set(doc.listColumns(id, {hidden: true}).map((c) => c.id));
        const visible = doc.listColumns(id).map((c) => c.id);
        const {records} = doc.fetchRecords(id);
        assert.equal(
          records.map((r) => r.id),
          stored.id,
          `${id} ids`,
        );
        records.forEach((rec, i) => {
          assert.equal(Object.keys(rec.fields), visible, `${id} fields`);
          for (const colId of visible) {
            const v = stored[colId][i];
            if (Array.isArray(v) && v[0] === 'E') {
              assert.is(rec.fields[colId], null);
              assert.is(rec.errors?.[colId], v[1]);
            } else {
              assert.equal(rec.fields[colId], v, `${id}[${rec.id}].${colId}`);
            }
          }
        });
        const withHidden = doc.fetchRecords(id, {hidden: true}).records;
        if (records.length) {
          assert.equal(Object.keys(withHidden[0].fields).sort(), [...hidden].sort());
        }
      }
    } finally {
      doc.close();
    }
  });
}

ftest('TypeEncoding.grist: values pinned literally', () => {
  const doc = GristDoc.open(copyFixture('TypeEncoding.grist'));
  const [r1, r2, r24] = doc.fetchRecords('Types').records;
  assert.equal(r1.fields.AnyRef, ['R', 'Types', 0]);
  assert.is(r1.fields.Bool, false);
  assert.is(r1.fields.Date, null);
  assert.equal(r2.fields, {
    ...r2.fields,
    Date: 'Not-a-Date',
    Numeric: 'Not-a-Number',
    Reference: 'No-Ref',
    ReferenceList: 'No-RefList',
  });
  assert.equal(r2.errors, {
    AnyDate: 'InvalidTypedValue',
    AnyDateTime: 'InvalidTypedValue',
    AnyRef: 'AssertionError',
    AnyRefList: 'AssertionError',
    AnyAttachment: 'AssertionError',
  });
  assert.is(r24.id, 24);
  assert.equal(r24.fields.AnyDate, ['d', 1593648000]);
  assert.equal(r24.fields.AnyDateTime, ['D', 651259180.705, 'America/New_York']);
  assert.equal(r24.fields.ReferenceList, ['L', 2, 24]);
  assert.equal(r24.fields.Attachments, ['L', 1]);
  assert.is(r24.fields.DateTime, 1598030380.705);
  assert.is(r24.fields.Numeric, 17.25);
  const data = doc.fetchColumns('Types');
  assert.equal(data.AnyDate[1], ['E', 'InvalidTypedValue', 'Date', 'Not-a-Date']);
  const typed = doc.fetchRecords('Types', {cellFormat: 'typed'}).records;
  assert.equal(typed[1].fields.AnyDate, ['E', 'InvalidTypedValue', 'Date', 'Not-a-Date']);
  assert.is(typed[1].errors, undefined);
  assert.equal(typed[2].fields.Date, ['d', 1593561600]);
  assert.equal(typed[2].fields.DateTime, ['D', 1598030380.705, 'America/New_York']);
  assert.equal(typed[2].fields.Reference, ['R', 'Types', 2]);
  assert.equal(typed[0].fields.ReferenceList, ['r', 'Types', []]);
  doc.close();
});

ftest('GridWithAllFields.grist: ChoiceList, DateTime with a zone, typed format', () => {
  const doc = GristDoc.open(copyFixture('GridWithAllFields.grist'));
  const rec = doc.fetchRecords('Table1').records[0];
  assert.equal(rec.fields.Choice_List, ['L', 'Two', 'Three']);
  assert.is(rec.fields.Checkbox, true);
  assert.is(rec.fields.Integer_TextBox, 42);
  const typed = doc.fetchRecords('Table1', {cellFormat: 'typed'}).records[0];
  assert.equal(typed.fields.DateTime, ['D', 1774159200, 'Europe/Paris']);
  assert.equal(typed.fields.Attachment, ['r', '_grist_Attachments', [1, 2]]);
  assert.equal(doc.listColumns('Table1').find((c) => c.id === 'DateTime')!.fields.type, 'DateTime:Europe/Paris');
  doc.close();
});

ftest('older schemas (36, 25) opened read-only are readable but refuse writes without touching the file', () => {
  for (const [name, version, table] of [
    ['World.grist', 36, 'City'],
    ['Favorite_Films.grist', 25, 'Films'],
  ] as const) {
    const path = copyFixture(name);
    const doc = GristDoc.open(path, {readonly: true});
    assert.is(doc.schemaVersion, version);
    assert.is(doc.isWritable, false);
    const before = doc.fetchColumns(table);
    assert.throws(() => doc.addRecords(table, [{}]), /read-only/);
    assert.throws(() => doc.addTables([{columns: [{}]}]), /read-only/);
    assert.equal(doc.fetchColumns(table), before);
    doc.close();
  }
  const world = GristDoc.open(copyFixture('World.grist'));
  assert.equal(world.fetchRecords('City', {limit: 1}).records[0], {
    id: 1,
    fields: {Name: 'Kabul', District: 'Kabol', Population: 1780000, Country: 2, PopulationK: 1780},
  });
  world.close();
  const films = GristDoc.open(copyFixture('Favorite_Films.grist'));
  assert.equal(films.fetchRecords('Films', {limit: 1}).records[0].fields, {
    Title: 'Toy Story',
    Budget_millions: 30,
    Release_Date: 816998400,
  });
  films.close();
});

ftest('CursorWithRefLists1.grist: RefLists and tableRef lookups', () => {
  const doc = GristDoc.open(copyFixture('CursorWithRefLists1.grist'));
  assert.equal(doc.fetchRecords('Items', {limit: 1}).records[0].fields, {Tags: ['L', 5, 4], Name: 'Apple'});
  const ref = doc.listTables().find((t) => t.id === 'Items')!.fields.tableRef;
  assert.is(doc.resolveTableId(String(ref)), 'Items');
  assert.throws(() => doc.resolveTableId('99'), /Table not found "99"/);
  assert.throws(() => doc.resolveTableId('_gristsys_Files'), /Table not found/);
  doc.close();
});

test.run();
