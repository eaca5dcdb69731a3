// The Date type (cells/coltypes/date.ts): midnight UTC in seconds, moment.js date formats.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {columnType, convertValue as conv} from '../src/cells/coltypes/index.js';
import {parseDateStrict} from '../src/cells/coltypes/date.js';
import {makeTypedFormatter} from '../src/cells/types.js';

const US = {locale: 'en-US'};
const ctx = {settings: US, refLookup: () => null};

test('SQL type, default and typed form', () => {
  const date = columnType('Date');
  assert.equal([date.sqlType, date.sqlDefault, date.defaultValue], ['DATE', 'NULL', null]);
  assert.equal(makeTypedFormatter('Date')!(1707868800), ['d', 1707868800]);
  assert.is(makeTypedFormatter('Date')!('alt text'), 'alt text');
});

test('encode/decode round trip', () => {
  const date = columnType('Date');
  for (const v of [1707868800, -86400, 'soon', null]) {
    assert.equal(date.decoder()(date.encoder('DATE')(v)), v, String(v));
  }
});

test('convert: numbers and ISO strings', () => {
  assert.is(conv('Date', '2024-02-14'), 1707868800);
  assert.is(conv('Date', '2024-02-14T10:00:00'), 1707868800);
  assert.is(conv('Date', '14/02/2024'), '14/02/2024');
  assert.is(conv('Date', ''), null);
  assert.is(conv('Date', 86400), 86400);
  assert.is(conv('Date', ['d', 86400]), 86400);
});

test('parse: the column format, relaxed, then unambiguous formats', () => {
  assert.is(parseDateStrict('2024-02-14', 'YYYY-MM-DD'), 1707868800);
  assert.is(parseDateStrict('2024/2/14', 'YYYY-MM-DD'), 1707868800);
  assert.is(parseDateStrict('02/14/2024', 'MM/DD/YYYY'), 1707868800);
  assert.is(parseDateStrict('14.02.2024', 'DD.MM.YYYY'), 1707868800);
  assert.is(parseDateStrict('Feb 14 2024', 'YYYY-MM-DD'), 1707868800, 'unambiguous fallback');
  assert.is(parseDateStrict('14/02/2024', 'YYYY-MM-DD'), null);
  assert.is(parseDateStrict('2024-02-30', 'YYYY-MM-DD'), null);
  assert.is(parseDateStrict('1707868800', 'YYYY-MM-DD'), 1707868800, 'timestamps are accepted');
  const parse = columnType('Date').parser({dateFormat: 'DD/MM/YYYY'}, ctx)!;
  assert.is(parse('14/02/2024'), 1707868800);
  assert.is(parse('soon'), 'soon');
});

test('format: the column date format in UTC; encoded datetimes in their own zone', () => {
  const format = (options: object, v: any) => columnType('Date').formatter(options as any, US)(v);
  assert.is(format({}, 1707868800), '2024-02-14');
  assert.is(format({dateFormat: 'MMMM Do, YYYY'}, 1707868800), 'February 14th, 2024');
  assert.is(format({}, ['D', 86400 * 1.5, 'Asia/Tokyo']), '1970-01-02');
  assert.is(format({}, null), '');
  assert.is(format({}, 'soon'), 'soon');
});

test('parse and format round trip through the column format', () => {
  for (const dateFormat of ['YYYY-MM-DD', 'MM/DD/YYYY', 'DD MMM YYYY', 'MMMM Do, YYYY']) {
    const parse = columnType('Date').parser({dateFormat}, ctx)!;
    const format = columnType('Date').formatter({dateFormat}, US);
    assert.is(parse(format(1707868800)), 1707868800, dateFormat);
  }
});

test('table schema: date with the Grist format', () => {
  assert.equal(columnType('Date').schemaType({}, 'en-US'), {type: 'date', format: 'any', gristFormat: 'YYYY-MM-DD'});
});

test.run();
