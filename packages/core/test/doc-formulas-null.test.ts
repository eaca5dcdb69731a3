// Empty cells (NULL in SQLite) are None in formulas, never the column type's default (issue 37 §3):
// Grist loads a NULL as None (DocStorage leaves it null, column.set keeps it), so `$N * 2` of an
// empty Numeric cell is a TypeError, and a formula cell stored as NULL whose result is the
// default (0, false) is written, as Grist writes it.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import Database from 'better-sqlite3';
import {GristDoc} from '../src/doc/index.js';
import {FORMULAS_TABLE} from '../src/doc/formulas.js';
import {tempPath} from './doc-helpers.js';

/** T(N Numeric, I Int, S Text, CL ChoiceList) with an empty row and a filled one, no formulas yet. */
function withEmptyRow(): GristDoc {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'N', fields: {type: 'Numeric', isFormula: false}},
        {id: 'I', fields: {type: 'Int', isFormula: false}},
        {id: 'S', fields: {type: 'Text', isFormula: false}},
      ],
    },
  ]);
  doc.addRecords('T', [
    {N: null, I: null, S: null},
    {N: 2, I: 3, S: 'x'},
  ]);
  return doc;
}

/** Formulas (Any columns) and what Grist 1.7.17 gives for the empty row and the filled one. */
const CASES: Array<[string, unknown[]]> = [
  ['$N * 2', [['E', 'TypeError'], 4]],
  ['str($N)', ['None', '2.0']],
  ['$S.upper()', [['E', 'AttributeError'], 'X']],
  ['round($N)', [['E', 'TypeError'], 2]],
  ['CONCAT($N, $I)', ['NoneNone', '2.03']],
  ['IF(1, $N, 1e3)', [null, 2]],
  ['2.5 / $I', [['E', 'TypeError'], 2.5 / 3]],
  ['VALUE(str($I))', [['E', 'ValueError'], 3]],
];

test('a formula column added to existing rows reads their empty cells as None', () => {
  const doc = withEmptyRow();
  CASES.forEach(([formula], i) =>
    doc.addColumns('T', [{id: `F${i}`, fields: {type: 'Any', isFormula: true, formula}}]),
  );
  const cols = doc.fetchColumns('T');
  CASES.forEach(([formula, want], i) => assert.equal(cols[`F${i}`], want, formula));
  doc.close();
});

test('after reopening, a changed formula reads empty cells as None', () => {
  const doc = withEmptyRow();
  doc.addColumns('T', [{id: 'F', fields: {type: 'Any', isFormula: true, formula: '$N'}}]);
  const path = doc.path;
  doc.close();
  const again = GristDoc.open(path);
  CASES.forEach(([formula, want]) => {
    again.updateColumns('T', [{id: 'F', fields: {formula}}]);
    assert.equal(again.fetchColumns('T').F, want, formula);
  });
  again.close();
});

test('formula cells stored as NULL get results equal to the default written (as Grist does)', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'Amount', fields: {type: 'Numeric', isFormula: false}},
        {id: 'Neg', fields: {type: 'Bool', isFormula: true, formula: '$Amount < 0'}},
        {id: 'Zero', fields: {type: 'Numeric', isFormula: true, formula: '$Amount * 0'}},
        {id: 'Len', fields: {type: 'Int', isFormula: true, formula: 'len(T.lookupRecords(Amount=-1))'}},
        {id: 'Empty', fields: {type: 'Text', isFormula: true, formula: '""'}},
      ],
    },
  ]);
  doc.addRecords('T', [{Amount: 1}, {Amount: 5}]);
  const path = doc.path;
  doc.close();
  // Another writer's file: formula cells NULL, not computed by gristlite.
  const db = new Database(path);
  db.exec(`UPDATE T SET Neg = NULL, Zero = NULL, Len = NULL, Empty = NULL; DROP TABLE ${FORMULAS_TABLE}`);
  db.close();
  const again = GristDoc.open(path);
  again.recomputeFormulas();
  const cols = again.fetchColumns('T');
  assert.equal(
    [cols.Neg, cols.Zero, cols.Len, cols.Empty],
    [
      [false, false],
      [0, 0],
      [0, 0],
      ['', ''],
    ],
  );
  again.close();
});

test('lookups, sorts and averages keep None apart from 0 and ""', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'N', fields: {type: 'Numeric', isFormula: false}},
        {id: 'I', fields: {type: 'Int', isFormula: false}},
        {id: 'S', fields: {type: 'Text', isFormula: false}},
      ],
    },
  ]);
  doc.addRecords('T', [
    {N: null, I: null, S: null},
    {N: 2, I: 0, S: ''},
    {N: 0, I: 0, S: 'a'},
    {N: null, I: null, S: ''},
  ]);
  const formulas = [
    'len(T.lookupRecords(I=$I))',
    'T.lookupOne(S=$S).id',
    // Grist's SortKey: None before everything, reversed by "-", ties by row id.
    '[r.id for r in T.lookupRecords(sort_by="-I")]',
    // AVERAGE skips what is not a number.
    'AVERAGE(T.all.N)',
  ];
  formulas.forEach((formula, i) =>
    doc.addColumns('T', [{id: `F${i}`, fields: {type: 'Any', isFormula: true, formula}}]),
  );
  const cols = doc.fetchColumns('T');
  assert.equal(
    formulas.map((_, i) => cols[`F${i}`]),
    [[2, 2, 2, 2], [1, 2, 3, 2], Array(4).fill(['L', 2, 3, 1, 4]), [1, 1, 1, 1]],
  );
  doc.close();
});

test('an empty ChoiceList cell is the empty tuple in formulas (ChoiceListColumn._make_rich_value)', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'CL', fields: {type: 'ChoiceList', isFormula: false}},
        {id: 'In', fields: {type: 'Any', isFormula: true, formula: '"a" in $CL'}},
        {id: 'Same', fields: {type: 'Any', isFormula: true, formula: '$CL'}},
        {id: 'Len', fields: {type: 'Any', isFormula: true, formula: 'len($CL)'}},
        {id: 'Back', fields: {type: 'ChoiceList', isFormula: true, formula: '$CL'}},
      ],
    },
  ]);
  doc.addRecords('T', [{CL: null}, {CL: ['L', 'a']}]);
  const cols = doc.fetchColumns('T');
  assert.equal(
    [cols.In, cols.Same, cols.Len, cols.Back],
    [
      [false, true],
      [['L'], ['L', 'a']],
      [0, 1],
      [null, ['L', 'a']],
    ],
  );
  doc.close();
});

test('values of the engine version that read empty cells as defaults are not trusted', () => {
  const doc = withEmptyRow();
  doc.addColumns('T', [{id: 'F', fields: {type: 'Any', isFormula: true, formula: '$N * 2'}}]);
  const path = doc.path;
  doc.close();
  // What version 1 stored: 0 for the empty row.
  const db = new Database(path);
  db.exec(`UPDATE T SET F = 0 WHERE id = 1; UPDATE ${FORMULAS_TABLE} SET engineVersion = 1`);
  db.close();
  const again = GristDoc.open(path);
  again.addRecords('T', [{N: 1}]);
  assert.equal(again.fetchColumns('T').F, [['E', 'TypeError'], 4, 2]);
  again.close();
});

test.run();
