// Column ids that are JavaScript property names (`name`, `length`, `constructor`, ...) must work in
// every way a formula reads a column: attribute lookup goes through the engine's own tables, never
// through JavaScript objects (issue 26, section 1).
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc} from '../src/doc/index.js';
import {PY_KEYWORDS, pickColIdent} from '../src/doc/identifiers.js';
import {tempPath} from './doc-helpers.js';
import {pyrepr} from './formula-helpers.js';
import {seededRandom as prng} from '../src/testing/random.js';

const IDENT = /^[A-Za-z][A-Za-z0-9_]*$/;

/**
 * The column ids under test: every name JavaScript objects carry (as the document would pick it),
 * Python keywords as Grist renames them, common ones, and random valid ids.
 */
function columnIds(): string[] {
  const names = new Set<string>();
  for (const proto of [Object.prototype, Function.prototype, Array.prototype, String.prototype]) {
    for (const n of Object.getOwnPropertyNames(proto)) names.add(n);
  }
  for (const k of PY_KEYWORDS) {
    names.add(k);
    names.add(k + '_');
  }
  for (const n of ['name', 'prototype', 'caller', 'callee', 'arguments', 'then', 'size', 'get', 'items', 'Record']) {
    names.add(n);
  }
  const rnd = prng(26);
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_';
  for (let i = 0; i < 40; i++) {
    let s = '';
    const len = 1 + Math.floor(rnd() * 12);
    for (let j = 0; j < len; j++) s += alphabet[Math.floor(rnd() * alphabet.length)];
    names.add(s);
  }
  // What the document makes of each (leading underscores dropped, keywords renamed), unique
  // case-insensitively; `id` is the row id, and `Grp`/`K`/`P` are the test's own columns.
  const picked: string[] = [];
  for (const n of names) {
    const id = pickColIdent(n, ['id', 'Grp', 'K', 'P', 'manualSort', ...picked]);
    if (IDENT.test(id) && !/^(F|G|S)_\d+$/.test(id)) picked.push(id);
  }
  return picked;
}

const IDS = columnIds();
/** Row r's cell of column x: the row and the column both show, and `r2-` + x is a lookup key. */
const val = (x: string, row: number) => `r${row}-${x}`;

// Attributes of Grist's own RecordSet come before its columns (Grist's __getattr__ is a fallback).
const RECORDSET_OWN = new Set(['find']);
/** Column x of a RecordSet expression, as a list (through records when `orig`, the id the data was made under, is Grist's own). */
const setCol = (rs: string, x: string, orig: string) =>
  RECORDSET_OWN.has(orig) ? `[r.${x} for r in ${rs}]` : `${rs}.${x}`;

const fFormula = (x: string) => `$${x} + "|" + rec.${x} + "|" + ("%s" % ($${x},))`;
/** `key` names the data (lookup keys are text, which renames leave alone). */
const gFormula = (x: string, key: string) =>
  `"%s/%s/%s" % ($P.${x}, ",".join(${setCol(`People.lookupRecords(${x}=$K + "${key}")`, x, key)}), ` +
  `People.lookupOne(${x}=$K + "${key}").${x})`;
const sFormula = (x: string, orig = x) => `",".join(sorted(${setCol('$group', x, orig)}))`;

function peopleColumns(ids: string[]) {
  return [
    {id: 'Grp', fields: {type: 'Text', isFormula: false}},
    ...ids.map((x) => ({id: x, fields: {type: 'Text', isFormula: false}})),
    ...ids.map((x, i) => ({id: `F_${i}`, fields: {type: 'Any', isFormula: true, formula: fFormula(x)}})),
  ];
}

function usesColumns(ids: string[]) {
  return [
    {id: 'P', fields: {type: 'Ref:People', isFormula: false}},
    {id: 'K', fields: {type: 'Text', isFormula: false}},
    ...ids.map((x, i) => ({id: `G_${i}`, fields: {type: 'Any', isFormula: true, formula: gFormula(x, x)}})),
  ];
}

/** People (a Text column per id), Uses (references and lookups), and a summary of People by Grp. */
function makeDoc(ids: string[]): GristDoc {
  const doc = GristDoc.create(tempPath());
  doc.addTables([{id: 'People', columns: peopleColumns(ids)}]);
  doc.addTables([
    {id: 'Uses', columns: usesColumns(ids)},
    {
      id: 'People_summary_Grp',
      columns: [
        {id: 'Grp', fields: {type: 'Text', isFormula: false}},
        {id: 'group', fields: {type: 'RefList:People', isFormula: true, formula: 'table.getSummarySourceGroup(rec)'}},
        {id: 'count', fields: {type: 'Int', isFormula: true, formula: 'len($group)'}},
        ...ids.map((x, i) => ({
          id: `S_${i}`,
          fields: {type: 'Any', isFormula: true, formula: sFormula(x)},
        })),
      ],
    },
  ]);
  const tableRef = (t: string) => doc.listTables().find((x) => x.id === t)!.fields.tableRef;
  const colRef = (t: string, c: string) => doc.listColumns(t).find((x) => x.id === c)!.fields.colRef;
  doc.applyUserActions([
    ['UpdateRecord', '_grist_Tables', tableRef('People_summary_Grp'), {summarySourceTable: tableRef('People')}],
    [
      'UpdateRecord',
      '_grist_Tables_column',
      colRef('People_summary_Grp', 'Grp'),
      {summarySourceCol: colRef('People', 'Grp')},
    ],
  ]);
  const person = (row: number, grp: string) => Object.fromEntries([['Grp', grp], ...ids.map((x) => [x, val(x, row)])]);
  doc.addRecords('People', [person(1, 'a'), person(2, 'a'), person(3, 'b')]);
  // A row given only its group: every other cell is the column's default.
  doc.addRecords('People', [{Grp: 'b'}]);
  doc.addRecords('Uses', [
    {P: 2, K: 'r2-'},
    {P: 3, K: ''},
  ]);
  return doc;
}

/** Checks every formula cell of the data makeDoc(ids) wrote (whatever the columns are called now). */
function check(doc: GristDoc, ids: string[], stage: string): void {
  const people = doc.fetchColumns('People');
  const uses = doc.fetchColumns('Uses');
  const summary = doc.fetchColumns('People_summary_Grp');
  const bad: string[] = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  ids.forEach((x, i) => {
    const f = [1, 2, 3].map((r) => [val(x, r), val(x, r), val(x, r)].join('|')).concat(['||']);
    if (!same(people[`F_${i}`], f)) bad.push(`${x}: $${x} gives ${JSON.stringify(people[`F_${i}`])}`);
    const g = [`${val(x, 2)}/${val(x, 2)}/${val(x, 2)}`, `${val(x, 3)}//`];
    if (!same(uses[`G_${i}`], g)) bad.push(`${x}: $P.${x}/lookups give ${JSON.stringify(uses[`G_${i}`])}`);
    const s = [`${val(x, 1)},${val(x, 2)}`, `,${val(x, 3)}`];
    if (!same(summary[`S_${i}`], s)) bad.push(`${x}: $group.${x} gives ${JSON.stringify(summary[`S_${i}`])}`);
  });
  assert.equal(
    bad.length,
    0,
    `${stage}: ${bad.length} wrong cells over ${ids.length} ids:\n${bad.slice(0, 30).join('\n')}`,
  );
}

const formulaOf = (doc: GristDoc, t: string, c: string) => doc.listColumns(t).find((x) => x.id === c)!.fields.formula;

test(`every valid column id works in $col, rec.col, $Ref.col, lookups, RecordSet attributes, $group (${IDS.length} ids)`, () => {
  for (const x of [
    'name',
    'constructor',
    'toString',
    'valueOf',
    'length',
    'prototype',
    'caller',
    'proto__',
    'cclass',
    'class_',
  ])
    assert.ok(IDS.includes(x), x);
  const doc = makeDoc(IDS);
  try {
    check(doc, IDS, 'created');
    // Formulas recompute on a write through each id.
    doc.applyUserActions([['BulkUpdateRecord', 'People', [1], Object.fromEntries(IDS.map((x) => [x, ['new']]))]]);
    const people = doc.fetchColumns('People');
    const wrong = IDS.filter((_, i) => (people[`F_${i}`] as unknown[])[0] !== 'new|new|new');
    assert.equal(wrong, []);
    doc.applyUserActions([['BulkUpdateRecord', 'People', [1], Object.fromEntries(IDS.map((x) => [x, [val(x, 1)]]))]]);
    check(doc, IDS, 'updated');
  } finally {
    doc.close();
  }
});

test('renames to and from such ids rewrite formulas, which keep computing', () => {
  // In documents of 40 ids each: a rename's cost grows with the width of the schema.
  for (let k = 0; k < IDS.length; k += 40) renameRoundTrip(IDS.slice(k, k + 40));
});

function renameRoundTrip(ids: string[]): void {
  const doc = makeDoc(ids);
  try {
    const temp = ids.map((_, i) => `Tmp_${i}`);
    doc.updateColumns(
      'People',
      ids.map((x, i) => ({id: x, fields: {colId: temp[i]}})),
    );
    const bad: string[] = [];
    ids.forEach((x, i) => {
      const f = formulaOf(doc, 'People', `F_${i}`);
      if (f !== fFormula(temp[i])) bad.push(`${x}: ${f}`);
      const g = formulaOf(doc, 'Uses', `G_${i}`);
      if (g !== gFormula(temp[i], x)) bad.push(`${x}: ${g}`);
      const s = formulaOf(doc, 'People_summary_Grp', `S_${i}`);
      if (s !== sFormula(temp[i], x)) bad.push(`${x}: ${s}`);
    });
    assert.equal(bad, []);
    check(doc, ids, 'renamed away');
    doc.applyUserActions(ids.map((x, i) => ['RenameColumn', 'People', temp[i], x]));
    ids.forEach((x, i) => {
      for (const [t, c, want] of [
        ['People', `F_${i}`, fFormula(x)],
        ['Uses', `G_${i}`, gFormula(x, x)],
        ['People_summary_Grp', `S_${i}`, sFormula(x)],
      ]) {
        const got = formulaOf(doc, t, c);
        if (got !== want) bad.push(`${x}: ${got}`);
      }
    });
    assert.equal(bad, []);
    check(doc, ids, 'renamed back');
  } finally {
    doc.close();
  }
}

test('a dict with any string key is stored in an Any column as that key', () => {
  const doc = GristDoc.create(tempPath());
  try {
    doc.addTables([
      {
        id: 'T',
        columns: [
          {id: 'A', fields: {type: 'Text', isFormula: false}},
          {id: 'D', fields: {type: 'Any', isFormula: true, formula: 'dict(__proto__=1)'}},
          {id: 'E', fields: {type: 'Any', isFormula: true, formula: '{"__proto__": {"x": $A}, "constructor": 2}'}},
          {
            id: 'R',
            fields: {type: 'Any', isFormula: true, formula: '[$D["__proto__"], list($E.keys()), $E["__proto__"]]'},
          },
          {id: 'J', fields: {type: 'Any', isFormula: true, formula: 'import json\njson.dumps($D)'}},
        ],
      },
    ]);
    doc.addRecords('T', [{A: 'a'}]);
    const cols = doc.fetchColumns('T');
    assert.is(JSON.stringify(cols.D), '[["O",{"__proto__":1}]]');
    assert.is(JSON.stringify(cols.E), '[["O",{"__proto__":["O",{"x":"a"}],"constructor":2}]]');
    assert.is(JSON.stringify(cols.R), '[["L",1,["L","__proto__","constructor"],["O",{"x":"a"}]]]');
    assert.equal(cols.J, ['{"__proto__": 1}']);
    // Prototypes are untouched: the key is data.
    assert.is(Object.getPrototypeOf((cols.D[0] as unknown[])[1]), Object.prototype);
  } finally {
    doc.close();
  }
});

test('a column named constructor is its cell, and leads no further', () => {
  const doc = GristDoc.create(tempPath());
  try {
    doc.addTables([
      {
        id: 'T',
        columns: [
          {id: 'constructor', fields: {type: 'Text', isFormula: false}},
          {id: 'A', fields: {type: 'Any', isFormula: true, formula: "rec.constructor.constructor('return process')()"}},
          {id: 'B', fields: {type: 'Any', isFormula: true, formula: 'T.all.constructor'}},
          {id: 'C', fields: {type: 'Any', isFormula: true, formula: 'rec._table.constructor'}},
          {id: 'D', fields: {type: 'Any', isFormula: true, formula: 'type(rec).constructor'}},
        ],
      },
    ]);
    doc.addRecords('T', [{constructor: 'x'}]);
    const cols = doc.fetchColumns('T');
    assert.equal(cols.A, [['E', 'AttributeError']]);
    assert.equal(cols.B, [['L', 'x']]);
    assert.equal(cols.C, [['E', 'AttributeError']]);
    assert.equal(cols.D, [['E', 'AttributeError']]);
  } finally {
    doc.close();
  }
});

test('sandbox: no formula reaches a JavaScript object through names or imports', () => {
  for (const src of [
    'import constructor\nconstructor',
    'import toString\ntoString()',
    'import __proto__\n__proto__',
    'from math import constructor\nconstructor',
    'import math\nmath.constructor',
    'getattr(str, "constructor")',
    'str.constructor',
    '"x".constructor.constructor("return process")()',
    'int.__class__',
    '().__class__',
    'dict(__proto__=1).__proto__',
    'hasattr("", "constructor")',
  ]) {
    const r = pyrepr(src);
    assert.ok(/^!(AttributeError|ImportError|ModuleNotFoundError)/.test(r) || r === 'False', `${src}: ${r}`);
  }
  assert.is(pyrepr('dict(__proto__=1)'), "{'__proto__': 1}");
  assert.is(pyrepr('dict(toString=1, constructor=2)["constructor"]'), '2');
  assert.is(pyrepr('"%(name)s %(constructor)s" % {"name": 1, "constructor": 2}'), "'1 2'");
  assert.is(pyrepr('"{constructor}".format(constructor=3)'), "'3'");
});

test.run();
