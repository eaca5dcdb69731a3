// Attachments (cells/coltypes/attachments.ts): a RefList of _grist_Attachments shown as ids.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {columnType, convertValue as conv} from '../src/cells/coltypes/index.js';
import {makeTypedFormatter} from '../src/cells/types.js';

const US = {locale: 'en-US'};

test('storage and typed form as a RefList of _grist_Attachments, no display lookups', () => {
  const att = columnType('Attachments');
  assert.equal(
    [att.sqlType, att.sqlDefault, att.target, att.displayTarget, att.isList],
    ['TEXT', 'NULL', '_grist_Attachments', null, true],
  );
  assert.is(att.encoder('TEXT')(['L', 1]), '[1]');
  assert.equal(att.decoder()(att.encoder('TEXT')(['L', 1, 2])), ['L', 1, 2]);
  assert.equal(makeTypedFormatter('Attachments')!(['L', 1, 2]), ['r', '_grist_Attachments', [1, 2]]);
});

test('convert and parse ids', () => {
  assert.equal(conv('Attachments', ['L', 7]), ['L', 7]);
  assert.equal(conv('Attachments', '[7, 8]'), ['L', 7, 8]);
  const parse = columnType('Attachments').parser(
    {},
    {settings: US, refLookup: (texts) => ['L', ...texts.map(Number)]},
  )!;
  assert.equal(parse('7, 8'), ['L', 7, 8]);
});

test('format: ids as a list; table schema: array', () => {
  assert.is(columnType('Attachments').formatter({}, US)(['L', 1, 2]), '1, 2');
  assert.equal(columnType('Attachments').schemaType({}, 'en-US'), {type: 'array'});
});

test.run();
