// The order a lookup or PREVIOUS/NEXT/RANK sorts by, as Grist's make_sort_spec builds it
// (sandbox/grist/table.py, and its cases in test_lookup_sort.py): the columns named, then
// manualSort when the table has it and it is not named (ties keep the order rows have in views),
// then the row id; a spec naming 'id' ends there; order_by=None is manualSort alone; no order_by
// is row id order; a legacy sort_by string gets no manualSort; PREVIOUS needs order_by.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {type ColumnSpec, FormulaEngine} from '../src/engine.js';

const data = (colId: string, type: string): ColumnSpec => ({colId, type, isFormula: false, formula: ''});
const formula = (colId: string, text: string): ColumnSpec => ({colId, type: 'Any', isFormula: true, formula: text});

/**
 * Rows 1-6 with K ties (1, 1, 2, 2, 1, 2) and a manual order that is not the id order: in views
 * the rows read 6, 3, 5, 1, 4, 2.
 */
function engine(formulas: ColumnSpec[], manualSort = true): FormulaEngine {
  const e = new FormulaEngine();
  const rows = [1, 2, 3, 4, 5, 6];
  e.loadTable(
    {
      tableId: 'T',
      columns: [...(manualSort ? [data('manualSort', 'ManualSortPos')] : []), data('K', 'Int'), ...formulas],
    },
    rows,
    {K: [1, 1, 2, 2, 1, 2], ...(manualSort ? {manualSort: [4, 6, 2, 5, 3, 1]} : {})},
  );
  e.recomputeAll();
  e.recalc();
  return e;
}

/** Row 1's cell of `col`: a list's items (a list cell is stored as ['L', ...items]). */
const ids = (e: FormulaEngine, col: string) => {
  const v = e.getCell('T', col, 1);
  return Array.isArray(v) && v[0] === 'L' ? v.slice(1) : v;
};

test('lookupRecords: the named columns, then manualSort, then the row id', () => {
  const e = engine([
    formula('ByK', 'T.lookupRecords(order_by="K").id'),
    formula('ByKDesc', 'T.lookupRecords(order_by="-K").id'),
    formula('None', 'T.lookupRecords(order_by=None).id'),
    formula('Default', 'T.lookupRecords().id'),
    formula('Id', 'T.lookupRecords(order_by="id").id'),
    formula('KThenId', 'T.lookupRecords(order_by=("K", "id", "manualSort")).id'),
    formula('IdDesc', 'T.lookupRecords(order_by="-id").id'),
    formula('KManual', 'T.lookupRecords(order_by=("K", "manualSort")).id'),
    formula('SortBy', 'T.lookupRecords(sort_by="K").id'),
    formula('SortByWins', 'T.lookupRecords(sort_by="-K", order_by="id").id'),
    formula('OneByK', 'T.lookupOne(order_by="K").id'),
  ]);
  // K=1 rows are 1, 2, 5 (manual positions 4, 6, 3), K=2 rows 3, 4, 6 (2, 5, 1).
  assert.equal(ids(e, 'ByK'), [5, 1, 2, 6, 3, 4]);
  assert.equal(ids(e, 'ByKDesc'), [6, 3, 4, 5, 1, 2]);
  assert.equal(ids(e, 'None'), [6, 3, 5, 1, 4, 2]);
  assert.equal(ids(e, 'Default'), [1, 2, 3, 4, 5, 6]);
  assert.equal(ids(e, 'Id'), [1, 2, 3, 4, 5, 6]);
  assert.equal(ids(e, 'KThenId'), [1, 2, 5, 3, 4, 6]);
  assert.equal(ids(e, 'IdDesc'), [6, 5, 4, 3, 2, 1]);
  assert.equal(ids(e, 'KManual'), [5, 1, 2, 6, 3, 4]);
  assert.equal(ids(e, 'SortBy'), [1, 2, 5, 3, 4, 6]);
  assert.equal(ids(e, 'SortByWins'), [3, 4, 6, 1, 2, 5]);
  assert.is(ids(e, 'OneByK'), 5);
});

test('without manualSort, ties go by row id, and order_by=None is the row id order', () => {
  const e = engine(
    [formula('ByK', 'T.lookupRecords(order_by="K").id'), formula('None', 'T.lookupRecords(order_by=None).id')],
    false,
  );
  assert.equal(ids(e, 'ByK'), [1, 2, 5, 3, 4, 6]);
  assert.equal(ids(e, 'None'), [1, 2, 3, 4, 5, 6]);
});

test('PREVIOUS, NEXT and RANK sort as lookups do; order_by is required', () => {
  const e = engine([
    formula('Prev', 'PREVIOUS(rec, order_by="K").id'),
    formula('Next', 'NEXT(rec, order_by=None).id'),
    formula('Rank', 'RANK(rec, order_by="K")'),
    formula('PrevById', 'PREVIOUS(rec, order_by="id").id'),
    formula('Missing', 'PREVIOUS(rec).id'),
  ]);
  const col = (c: string) => [1, 2, 3, 4, 5, 6].map((r) => e.getCell('T', c, r));
  // By K then manualSort: 5, 1, 2, 6, 3, 4.
  assert.equal(col('Prev'), [5, 1, 6, 3, 0, 2]);
  assert.equal(col('Rank'), [2, 3, 5, 6, 1, 4]);
  // In the manual order 6, 3, 5, 1, 4, 2.
  assert.equal(col('Next'), [4, 0, 5, 2, 1, 3]);
  assert.equal(col('PrevById'), [0, 1, 2, 3, 4, 5]);
  const missing = e.getCell('T', 'Missing', 1) as unknown[];
  assert.is(missing[0], 'E');
  assert.is(missing[1], 'TypeError');
});

test('a sort_by that is not a string is refused as Grist refuses it', () => {
  const e = engine([formula('Bad', 'T.lookupRecords(sort_by=("K",)).id')]);
  const bad = e.getCell('T', 'Bad', 1) as unknown[];
  assert.equal(bad.slice(0, 2), ['E', 'TypeError']);
});

test.run();
