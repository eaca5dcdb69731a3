/**
 * Documents with data, built through the API itself, for the document-API suites: the "Timesheets"
 * document of SPEC §19 and the small "Foo" table several checklist items use.
 */
import {copyFileSync} from 'node:fs';
import Database from 'better-sqlite3';
import {makeId, markFormulasComputed} from '@gristlite/core/internal';
import {fixturePath} from '@gristlite/core/testing';
import type {ApiResponse} from './client.js';
import {ok, type TestUser, type World} from './world.js';

/** Path of a real Grist document in the shared fixtures (found by `@gristlite/core/testing`). */
export {fixturePath} from '@gristlite/core/testing';

/**
 * A copy of a fixture as a new doc in the user's Home workspace: the home record straight in the
 * store (upload is not what is tested here), then the file at the doc's path, marked as computed so
 * that the server serves the values Grist stored (what these suites read; the formulas suite and
 * the import tests cover recomputation).
 */
export async function importFixture(w: World, file: string, u: TestUser = w.chimpy): Promise<string> {
  const id = makeId();
  const workspaceId = await w.homeWs(u);
  await w.engine.store.createDoc({id, workspaceId, name: file.replace(/\.grist$/, ''), urlId: null, ownerUserId: u.id});
  copyFileSync(fixturePath(file), w.engine.docPath(id));
  const db = new Database(w.engine.docPath(id));
  try {
    markFormulasComputed(db);
  } finally {
    db.close();
  }
  return id;
}

/** `/api/docs/{doc}/tables/{table}`. */
export function tablePath(doc: string, table = 'Table1'): string {
  return `/api/docs/${doc}/tables/${table}`;
}

/** The records of Timesheets' Table1 (SPEC §19 item 1). */
export const TIMESHEETS = [
  {id: 1, fields: {A: 'hello', B: '', C: '', D: null, E: 'HELLO'}},
  {id: 2, fields: {A: '', B: 'world', C: '', D: null, E: ''}},
  {id: 3, fields: {A: '', B: '', C: '', D: null, E: ''}},
  {id: 4, fields: {A: '', B: '', C: '', D: null, E: ''}},
];

/**
 * A new doc whose Table1 is Timesheets': A, B, C Text; D an empty column; E the formula
 * `$A.upper()` (E is written as data first and then turned into a formula column, which computes
 * the same values).
 */
export async function newTimesheets(w: World, u: TestUser = w.chimpy, name = 'Timesheets'): Promise<string> {
  const doc = await w.newDoc(u, await w.homeWs(u), name);
  const t = tablePath(doc);
  const text = {type: 'Text', isFormula: false};
  ok(
    await w.api.patch(`${t}/columns`, {columns: ['A', 'B', 'C'].map((id) => ({id, fields: text}))}, u.as),
    'A, B, C to Text',
  );
  ok(await w.api.post(`${t}/columns`, {columns: [{id: 'D'}, {id: 'E', fields: text}]}, u.as), 'add D, E');
  const rows = [{fields: {A: 'hello', B: '', C: '', E: 'HELLO'}}, {fields: {A: '', B: 'world', C: '', E: ''}}];
  ok(await w.api.post(`${t}/records`, {records: rows}, u.as), 'rows 1-2');
  ok(await w.api.post(`${t}/records`, {records: [{}, {}]}, u.as), 'rows 3-4');
  ok(
    await w.api.patch(
      `${t}/columns`,
      {columns: [{id: 'E', fields: {type: 'Any', isFormula: true, formula: '$A.upper()'}}]},
      u.as,
    ),
    'E to formula',
  );
  return doc;
}

/** Adds table Foo (A, B Text) with Santa/1, Bob/11, Alice/2, Felix/22 to a doc. */
export async function addFoo(w: World, doc: string, u: TestUser = w.chimpy): Promise<void> {
  ok(
    await w.api.post(`/api/docs/${doc}/tables`, {tables: [{id: 'Foo', columns: [{id: 'A'}, {id: 'B'}]}]}, u.as),
    'add Foo',
  );
  ok(
    await w.api.post(
      `${tablePath(doc, 'Foo')}/data`,
      {A: ['Santa', 'Bob', 'Alice', 'Felix'], B: ['1', '11', '2', '22']},
      u.as,
    ),
    'Foo rows',
  );
}

/** The ids of a `{records: [...]}` response. */
export function ids(res: ApiResponse): number[] {
  ok(res);
  return res.body.records.map((r: {id: number}) => r.id);
}

/** `?filter=...` for a filter object. */
export function filterQs(filter: unknown): string {
  return `filter=${encodeURIComponent(JSON.stringify(filter))}`;
}
