import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {pickColIdent, pickColIdentList, pickTableIdent} from '../src/doc/index.js';

test('table ids (SPEC 8.1)', () => {
  assert.is(pickTableIdent('foo bar', []), 'Foo_bar');
  assert.is(pickTableIdent('123', []), 'T123');
  assert.is(pickTableIdent('PEOPLE', ['People']), 'PEOPLE2');
  assert.is(pickTableIdent('foo', []), 'Foo');
  assert.is(pickTableIdent(null, ['Table1']), 'Table2');
  assert.is(pickTableIdent('', []), 'Table1');
  assert.is(pickTableIdent('NewTable2', ['NewTable2']), 'NewTable2_2');
  assert.is(pickTableIdent('Table1', ['Table1']), 'Table1_2');
  assert.is(pickTableIdent('café', []), 'Cafe');
  assert.is(pickTableIdent('class', []), 'Class');
  assert.is(pickTableIdent('_grist_x', []), 'Grist_x');
});

test('column ids (SPEC 8.1)', () => {
  assert.is(pickColIdent('class', []), 'cclass');
  assert.is(pickColIdent('_foo bar', []), 'foo_bar');
  assert.is(pickColIdent('id', ['id']), 'id2');
  assert.is(pickColIdent('My Label!', []), 'My_Label_');
  assert.is(pickColIdent('1abc', []), 'c1abc');
  assert.is(pickColIdent('B', ['A', 'B']), 'B2');
  assert.is(pickColIdent('NewCol4', ['NewCol4']), 'NewCol4_2');
  assert.is(pickColIdent('b', ['B']), 'b2', 'collisions are case-insensitive');
  assert.is(pickColIdent('None', []), 'cNone');
  assert.is(pickColIdent('é', []), 'e');
});

test('generated column ids: A..Z, then AA, AB', () => {
  assert.is(pickColIdent(null, []), 'A');
  assert.is(pickColIdent('', ['A', 'B']), 'C');
  const all = Array.from({length: 26}, (_, i) => String.fromCharCode(65 + i));
  assert.is(pickColIdent(null, all), 'AA');
  assert.is(pickColIdent('!!!', [...all, 'AA']), 'AB');
});

test('list of column ids avoids each other', () => {
  assert.equal(pickColIdentList([null, '', 'NewCol4', 'NewCol4', 'x'], ['id']), [
    'A',
    'B',
    'NewCol4',
    'NewCol4_2',
    'x',
  ]);
});

test.run();
