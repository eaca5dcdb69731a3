// cellFormat=typed over every column type, as Grist's own docapi test "supports cellFormat=typed"
// (test/server/lib/docapi/DocApiRecords.ts in grist-core 1.7.17) builds its document: columns
// added to a table that has no rows yet, an Any formula listing them all, a full row, an empty
// row and a row of error values; attachments written afterwards.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '../src/internal.js';

const TYPES: Array<[string, string]> = [
  ['Attachments', 'Attachments'],
  ['Bool', 'Bool'],
  ['Choice', 'Choice'],
  ['ChoiceList', 'ChoiceList'],
  ['Date', 'Date'],
  ['DateTime', 'DateTime:America/New_York'],
  ['Int', 'Int'],
  ['Numeric', 'Numeric'],
  ['Ref', 'Ref:Table1'],
  ['RefList', 'RefList:Table1'],
  ['Text', 'Text'],
];

test('typed cells of every column type, in cells and inside an Any formula, as Grist gives them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-typed-'));
  const engine = await Engine.open({dataDir: dir, resumeWebhooks: false});
  try {
    const ada = await engine.forUser('ada@example.com', 'Ada');
    const doc = await ada.doc(await ada.createDoc((await ada.personalWorkspace()).id, {name: 'TypedCells'}));
    const fields = TYPES.map(([id]) => id);
    await doc.applyUserActions([
      ['AddTable', 'Table1', [{id: 'A'}]],
      ...TYPES.map(([id, type]) => ['AddColumn', 'Table1', id, {type}]),
      [
        'AddColumn',
        'Table1',
        'ALL',
        {type: 'Any', isFormula: true, formula: `[${fields.map((f) => `$${f}`).join(', ')}]`},
      ],
    ] as never);
    await doc.applyUserActions([
      [
        'AddRecord',
        'Table1',
        null,
        {
          Bool: true,
          Choice: 'Yes',
          ChoiceList: ['L', 'Yes', 'No'],
          Date: 1707868800,
          DateTime: 1707868800,
          Int: 42,
          Numeric: -8.5,
          Ref: 1,
          RefList: ['L', 2, 1],
          Text: 'hello world',
        },
      ],
      ['AddRecord', 'Table1', null, {}],
      [
        'AddRecord',
        'Table1',
        null,
        Object.fromEntries(
          fields.map((f) => [f, ['E', f === 'Int' || f === 'Numeric' ? 'ZeroDivisionError' : 'ValueError']]),
        ),
      ],
    ] as never);
    const ids = await doc.addAttachments([
      {fileName: 'hello.doc', data: Buffer.from('foobar')},
      {fileName: 'world.jpg', data: Buffer.from('123456')},
    ]);
    assert.equal(ids, [1, 2]);
    await doc.applyUserActions([['UpdateRecord', 'Table1', 1, {Attachments: ['L', 1, 2]}]] as never);
    const normal = await doc.fetchRecords('Table1');
    const typed = await doc.fetchRecords('Table1', {cellFormat: 'typed'});
    const check = (row: number, colId: string, expNormal: unknown, expTyped: unknown) => {
      assert.equal(normal[row].fields[colId], expNormal, `row ${row} ${colId} normal`);
      assert.equal(typed[row].fields[colId], expTyped, `row ${row} ${colId} typed`);
      const isError = Array.isArray(expTyped) && expTyped[0] === 'E';
      if (!isError) {
        const at = fields.indexOf(colId) + 1;
        assert.equal((normal[row].fields.ALL as unknown[])[at], expTyped, `row ${row} ALL[${colId}] normal`);
        assert.equal((typed[row].fields.ALL as unknown[])[at], expTyped, `row ${row} ALL[${colId}] typed`);
      }
    };
    check(0, 'Attachments', ['L', 1, 2], ['r', '_grist_Attachments', [1, 2]]);
    check(0, 'Bool', true, true);
    check(0, 'Choice', 'Yes', 'Yes');
    check(0, 'ChoiceList', ['L', 'Yes', 'No'], ['L', 'Yes', 'No']);
    check(0, 'Date', 1707868800, ['d', 1707868800]);
    check(0, 'DateTime', 1707868800, ['D', 1707868800, 'America/New_York']);
    check(0, 'Int', 42, 42);
    check(0, 'Numeric', -8.5, -8.5);
    check(0, 'Ref', 1, ['R', 'Table1', 1]);
    check(0, 'RefList', ['L', 2, 1], ['r', 'Table1', [2, 1]]);
    check(0, 'Text', 'hello world', 'hello world');
    check(1, 'Attachments', null, ['r', '_grist_Attachments', []]);
    check(1, 'Bool', false, false);
    check(1, 'Choice', '', '');
    check(1, 'ChoiceList', null, ['L']);
    check(1, 'Date', null, null);
    check(1, 'DateTime', null, null);
    check(1, 'Int', 0, 0);
    check(1, 'Numeric', 0, 0);
    check(1, 'Ref', 0, ['R', 'Table1', 0]);
    check(1, 'RefList', null, ['r', 'Table1', []]);
    check(1, 'Text', '', '');
    for (const f of fields) {
      check(2, f, null, ['E', f === 'Int' || f === 'Numeric' ? 'ZeroDivisionError' : 'ValueError']);
    }
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
