// The table-schema download (SPEC §6.3, decision 5) and the display formatters behind exports.
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc} from '../src/doc/index.js';
import {formatUnknown} from '../src/export/format.js';
import {formatMoment} from '@gristlite/formula';
import {tableSchema} from '../src/export/table-schema.js';
import {copyFixture, tempPath, withFixtures} from './doc-helpers.js';

const test = suite('export-table-schema');
const ftest = withFixtures(test);

test('§19: the exact shape for a table Foo with Text columns A and B', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'Foo',
      columns: [
        {id: 'A', fields: {type: 'Text'}},
        {id: 'B', fields: {type: 'Text'}},
      ],
    },
  ]);
  const schema = tableSchema(doc.db, 'Foo', {csvPath: 'http://host/api/docs/x/download/csv?tableId=Foo'});
  assert.equal(JSON.parse(JSON.stringify(schema)), {
    format: 'csv',
    mediatype: 'text/csv',
    encoding: 'utf-8',
    path: 'http://host/api/docs/x/download/csv?tableId=Foo',
    dialect: {delimiter: ',', doubleQuote: true},
    name: 'foo',
    title: 'Foo',
    schema: {
      fields: [
        {name: 'A', type: 'string', format: 'default'},
        {name: 'B', type: 'string', format: 'default'},
      ],
    },
  });
  assert.equal(Object.keys(schema), ['format', 'mediatype', 'encoding', 'path', 'dialect', 'name', 'title', 'schema']);
  doc.close();
});

test('name is the lower-cased tableId with - for _; title the raw view name; header=colId; descriptions', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([{id: 'My_Table', columns: [{id: 'A', fields: {type: 'Text', label: 'Alpha'}}]}]);
  doc.updateColumns('My_Table', [{id: 'A', fields: {description: 'the first'}}]);
  const viewId = doc.listTables().find((t) => t.id === 'My_Table')!.fields.primaryViewId;
  doc.db.prepare('UPDATE _grist_Views SET name = ? WHERE id = ?').run('My Page', viewId);
  const s = tableSchema(doc.db, 'My_Table', {csvPath: 'p', header: 'colId'});
  assert.is(s.name, 'my-table');
  assert.is(s.title, 'My Page');
  assert.equal(s.schema.fields, [{name: 'A', description: 'the first', type: 'string', format: 'default'}]);
  assert.equal(tableSchema(doc.db, 'My_Table', {csvPath: 'p'}).schema.fields[0].name, 'Alpha');
  assert.throws(
    () => tableSchema(doc.db, 'Nope', {csvPath: 'p'}),
    (e: any) => e.status === 404 && e.message === 'Table Nope not found.',
  );
  doc.close();
});

ftest('type mapping on GridWithAllFields.grist (decision 5: Int and Ref integer, lists array)', () => {
  const doc = GristDoc.open(copyFixture('GridWithAllFields.grist'));
  const fields = JSON.parse(
    JSON.stringify(tableSchema(doc.db, 'Table1', {csvPath: 'p', header: 'colId'}).schema.fields),
  );
  const byName = Object.fromEntries(fields.map((f: any) => [f.name, f]));
  assert.equal(byName.TextBox, {name: 'TextBox', type: 'string', format: 'default'});
  assert.equal(byName.HyperLink, {name: 'HyperLink', type: 'string', format: 'uri'});
  assert.equal(byName.Numeric_TextBox, {
    name: 'Numeric_TextBox',
    type: 'number',
    bareNumber: false,
    groupChar: ',',
    decimalChar: '.',
  });
  assert.equal(byName.Integer_TextBox, {name: 'Integer_TextBox', type: 'integer', bareNumber: false, groupChar: ','});
  assert.equal(byName.Checkbox, {name: 'Checkbox', type: 'boolean', trueValue: ['TRUE'], falseValue: ['FALSE']});
  assert.equal(byName.Date, {name: 'Date', type: 'date', format: 'any', gristFormat: 'YYYY-MM-DD'});
  // Grist prints the missing parts of a DateTime format as "undefined".
  assert.equal(byName.DateTime, {
    name: 'DateTime',
    type: 'datetime',
    format: 'any',
    gristFormat: 'undefined undefined',
  });
  assert.equal(byName.Choice, {name: 'Choice', type: 'string', constraints: {enum: ['One', 'Two', 'Three']}});
  assert.equal(byName.Choice_List, {name: 'Choice_List', type: 'array', constraints: {enum: ['One', 'Two', 'Three']}});
  assert.equal(byName.Reference, {name: 'Reference', type: 'integer'});
  assert.equal(byName.Reference_List, {name: 'Reference_List', type: 'array'});
  assert.equal(byName.Attachment, {name: 'Attachment', type: 'array'});
  assert.equal(byName.Any, {name: 'Any', type: 'string', format: 'default'});
  assert.equal(Object.keys(byName).length, 18);
  doc.close();
});

test('number separators follow the document locale', () => {
  const doc = GristDoc.create(tempPath(), {locale: 'de-DE'});
  doc.addTables([{id: 'N', columns: [{id: 'X', fields: {type: 'Numeric', widgetOptions: '{"numMode":"decimal"}'}}]}]);
  assert.equal(tableSchema(doc.db, 'N', {csvPath: 'p'}).schema.fields[0], {
    name: 'X',
    type: 'number',
    bareNumber: true,
    groupChar: '.',
    decimalChar: ',',
  });
  doc.close();
});

// ---------------------------------------------------------------------------------------------
// Formatters

test('moment format tokens', () => {
  const t = Date.UTC(2024, 1, 4, 15, 5, 9, 45); // Sunday 2024-02-04 15:05:09.045 UTC
  const f = (fmt: string, tz = 'UTC') => formatMoment(t, tz, fmt);
  assert.is(f('YYYY-MM-DD HH:mm:ss.SSS'), '2024-02-04 15:05:09.045');
  assert.is(f('YY M D H m s'), '24 2 4 15 5 9');
  assert.is(f('MMMM MMM Mo Do DDD DDDD Qo'), 'February Feb 2nd 4th 35 035 1st');
  assert.is(f('dddd ddd dd d E'), 'Sunday Sun Su 0 7');
  assert.is(f('h:mma hh:mm A k'), '3:05pm 03:05 PM 15');
  assert.is(f('[Week] W, [at] LT'), 'Week 5, at 3:05 PM');
  assert.is(f('LL'), 'February 4, 2024');
  assert.is(f('X x'), `${Math.floor(t / 1000)} ${t}`);
  assert.is(f('YYYY-MM-DD HH:mm:ssZ', 'America/New_York'), '2024-02-04 10:05:09-05:00');
  assert.is(f('HH:mm z ZZ', 'America/New_York'), '10:05 EST -0500');
  assert.is(formatMoment(Date.UTC(2024, 6, 1), 'America/New_York', 'HH:mm z'), '20:00 EDT');
  assert.is(f('HH:mm z', 'Europe/Paris'), '16:05 CET');
  assert.is(f('HH:mm z', 'Asia/Tokyo'), '00:05 +09');
  assert.is(f('HH:mm z', 'Asia/Kolkata'), '20:35 IST');
  assert.is(f('HH:mm', 'No/Such_Zone'), '15:05');
  assert.is(formatMoment(NaN, 'UTC', 'YYYY'), 'Invalid date');
});

test('formatUnknown: Grist-encoded values as Grist prints them', () => {
  assert.is(formatUnknown(null), '');
  assert.is(formatUnknown(1.5), '1.5');
  assert.is(formatUnknown(true), 'true');
  assert.is(formatUnknown(['L', 'a', 'b c', 'd,e', ' f']), 'a, b c, "d,e", " f"');
  assert.is(formatUnknown(['L', 1, ['L', 2, 'x']]), '[1, [2, "x"]]');
  assert.is(formatUnknown(['O', {b: 1, a: 'x'}]), '{"a": "x", "b": 1}');
  assert.is(formatUnknown(['d', 1707868800]), '2024-02-14');
  assert.is(formatUnknown(['D', 1707868800, 'UTC']), '2024-02-14 00:00:00+00:00');
  assert.is(formatUnknown(['L', ['D', 1707868800, 'UTC']]), '2024-02-14 00:00:00+00:00');
  assert.is(formatUnknown(['R', 'People', 3]), 'People[3]');
  assert.is(formatUnknown(['r', 'People', [1, 2]]), 'People[[1,2]]');
  assert.is(formatUnknown(['E', 'ZeroDivisionError']), '#DIV/0!');
  assert.is(formatUnknown(['E', 'TypeError', 'msg']), '#TypeError');
  assert.is(formatUnknown(['E', 'UnmarshallableError', 'x', '<object>']), '<object>');
  assert.is(formatUnknown(['P']), 'Loading...');
  assert.is(formatUnknown(['C']), 'CENSORED');
  assert.is(formatUnknown(['U', 'repr()']), 'repr()');
});

// Each type's formatter: coltypes-*.test.ts.

test.run();
