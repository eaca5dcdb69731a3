#!/usr/bin/env node
// Issue 42 §1: action history moves between gristlite and Grist both ways. Against a running
// gristlite and a running Grist 1.7.17 (the same user's API key on each):
//   node scripts/history-roundtrip.mjs --gristlite http://127.0.0.1:8585 --gristlite-key K \
//     --grist http://localhost:8484 --grist-key K [--out DIR]
// Writes through gristlite's API, downloads the document and uploads it to Grist: Grist's /states
// and /compare?detail=1 must equal gristlite's. Then Grist writes, gristlite opens Grist's file
// (same states), writes again, and Grist opens that (same states, same compare). Exit 1 on any
// difference; the answers of both are written to DIR/roundtrip.json. Last, the same schema writes
// (a column removed, a formula column removed, a table added with rows and removed) on both: the
// undo each stored for user tables must be the same (D124); metadata undo and stored actions are
// reported (gristlite rebuilds them from the write's net changes, not Grist's step by step).
import {mkdirSync, writeFileSync} from 'node:fs';
import {join} from 'node:path';
import {parseArgs} from 'node:util';

const {GristDoc, decodeBundle} = await import(new URL('../packages/core/dist/src/internal.js', import.meta.url).href);

const {values} = parseArgs({
  options: {
    gristlite: {type: 'string'},
    'gristlite-key': {type: 'string'},
    grist: {type: 'string'},
    'grist-key': {type: 'string'},
    out: {type: 'string', default: 'history-roundtrip'},
  },
});
if (!values.gristlite || !values.grist || !values['gristlite-key'] || !values['grist-key']) {
  console.error('usage: history-roundtrip.mjs --gristlite URL --gristlite-key K --grist URL --grist-key K [--out DIR]');
  process.exit(2);
}
const GL = {url: values.gristlite.replace(/\/$/, ''), key: values['gristlite-key'], name: 'gristlite'};
const GR = {url: values.grist.replace(/\/$/, ''), key: values['grist-key'], name: 'grist'};
mkdirSync(values.out, {recursive: true});

async function api(s, method, path, body, raw = false) {
  const headers = {Authorization: `Bearer ${s.key}`};
  let b = body;
  if (body && !(body instanceof FormData)) {
    headers['Content-Type'] = 'application/json';
    b = JSON.stringify(body);
  }
  const res = await fetch(s.url + path, {method, headers, body: b});
  if (raw) return Buffer.from(await res.arrayBuffer());
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  if (res.status >= 400) throw new Error(`${s.name} ${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return json;
}

async function personalWs(s) {
  const orgs = await api(s, 'GET', '/api/orgs');
  const org = orgs.find((o) => o.owner) ?? orgs[0];
  const ws = await api(s, 'GET', `/api/orgs/${org.id}/workspaces`);
  return ws[0].id;
}

async function upload(s, file, name) {
  const form = new FormData();
  form.append('upload', new Blob([file]), `${name}.grist`);
  form.append('workspaceId', String(await personalWs(s)));
  const r = await api(s, 'POST', '/api/docs', form);
  return r.id ?? r;
}

const out = {};
// 1. Writes through gristlite's REST API.
const ws = await personalWs(GL);
const doc = await api(GL, 'POST', `/api/workspaces/${ws}/docs`, {name: 'Hist'});
const t = `/api/docs/${doc}/tables/Table1`;
await api(GL, 'POST', `${t}/records`, {records: [{fields: {A: 'a', B: 1}}, {fields: {A: 'b', B: 2}}]});
await api(GL, 'PATCH', `${t}/records`, {records: [{id: 1, fields: {A: 'a2'}}]});
await api(GL, 'POST', `${t}/columns`, {
  columns: [{id: 'D', fields: {isFormula: true, formula: '$B * 2', type: 'Numeric'}}],
});
await api(GL, 'POST', `/api/docs/${doc}/apply`, [
  ['RenameColumn', 'Table1', 'C', 'CC'],
  ['AddRecord', 'Table1', null, {A: 'c', B: 5}],
]);
await api(GL, 'POST', `${t}/records/delete`, [2]);
await api(GL, 'POST', `/api/docs/${doc}/apply`, [['RemoveColumn', 'Table1', 'CC']]);
const glStates = (await api(GL, 'GET', `/api/docs/${doc}/states`)).states;
out.glStates = glStates;
const file = await api(GL, 'GET', `/api/docs/${doc}/download`, null, true);
writeFileSync(join(values.out, 'from-gristlite.grist'), file);

// 2. Grist opens it: its states and compare answers.
const gdoc = await upload(GR, file, 'FromGristlite');
const grStates = (await api(GR, 'GET', `/api/docs/${gdoc}/states`)).states;
out.grStates = grStates;
out.sameStates = JSON.stringify(glStates) === JSON.stringify(grStates);
const left = glStates.at(-2)?.h ?? glStates.at(-1).h;
const right = glStates[0].h;
const cq = `/compare?left=${left}&right=${right}&detail=1`;
out.glCompare = await api(GL, 'GET', `/api/docs/${doc}${cq}`);
out.grCompare = await api(GR, 'GET', `/api/docs/${gdoc}${cq}`);
out.sameCompare = JSON.stringify(out.glCompare) === JSON.stringify(out.grCompare);
out.grRecords = await api(GR, 'GET', `/api/docs/${gdoc}/tables/Table1/records`);

// 3. Grist edits it; gristlite opens Grist's file: the chain continues.
await api(GR, 'POST', `/api/docs/${gdoc}/tables/Table1/records`, {records: [{fields: {A: 'from grist', B: 9}}]});
const grStates2 = (await api(GR, 'GET', `/api/docs/${gdoc}/states`)).states;
const back = await api(GR, 'GET', `/api/docs/${gdoc}/download`, null, true);
writeFileSync(join(values.out, 'from-grist.grist'), back);
const doc2 = await upload(GL, back, 'FromGrist');
const glStates2 = (await api(GL, 'GET', `/api/docs/${doc2}/states`)).states;
out.grStates2 = grStates2;
out.glStates2 = glStates2;
out.sameStates2 = JSON.stringify(grStates2) === JSON.stringify(glStates2);
// gristlite writes again; Grist opens that: one chain.
await api(GL, 'PATCH', `/api/docs/${doc2}/tables/Table1/records`, {records: [{id: 1, fields: {A: 'again'}}]});
const glStates3 = (await api(GL, 'GET', `/api/docs/${doc2}/states`)).states;
const third = await api(GL, 'GET', `/api/docs/${doc2}/download`, null, true);
const gdoc3 = await upload(GR, third, 'Third');
const grStates3 = (await api(GR, 'GET', `/api/docs/${gdoc3}/states`)).states;
out.sameStates3 = JSON.stringify(glStates3) === JSON.stringify(grStates3);
out.glStates3 = glStates3;
out.grStates3 = grStates3;
const c3 = `/compare?left=${glStates3[2].h}&right=${glStates3[0].h}&detail=1`;
out.glCompare3 = await api(GL, 'GET', `/api/docs/${doc2}${c3}`);
out.grCompare3 = await api(GR, 'GET', `/api/docs/${gdoc3}${c3}`);
out.sameCompare3 = JSON.stringify(out.glCompare3) === JSON.stringify(out.grCompare3);
writeFileSync(join(values.out, 'roundtrip.json'), JSON.stringify(out, null, 1));
// The undo of the same schema writes, as each server stored it.
async function undoOf(s) {
  const wsId = await personalWs(s);
  const id = await api(s, 'POST', `/api/workspaces/${wsId}/docs`, {name: 'Undo'});
  const tp = `/api/docs/${id}/tables/Table1`;
  const apply = (actions) => api(s, 'POST', `/api/docs/${id}/apply`, actions);
  await apply([
    ['ModifyColumn', 'Table1', 'B', {type: 'Numeric'}],
    ['ModifyColumn', 'Table1', 'A', {type: 'Text'}],
  ]);
  await api(s, 'POST', `${tp}/records`, {
    records: [{fields: {A: 'x', B: 3}}, {fields: {A: '', B: 0}}, {fields: {A: 'z', B: 5}}],
  });
  await api(s, 'POST', `${tp}/columns`, {
    columns: [{id: 'F', fields: {isFormula: true, formula: '$B * 2', type: 'Numeric'}}],
  });
  await apply([['RemoveColumn', 'Table1', 'A']]);
  await apply([['RemoveColumn', 'Table1', 'F']]);
  await apply([
    [
      'AddTable',
      'T2',
      [
        {id: 'N', type: 'Int'},
        {id: 'G', isFormula: true, formula: '$N + 1'},
      ],
    ],
    ['BulkAddRecord', 'T2', [null, null], {N: [1, 2]}],
  ]);
  await apply([['RemoveTable', 'T2']]);
  const path = join(values.out, `undo-${s.name}.grist`);
  writeFileSync(path, await api(s, 'GET', `/api/docs/${id}/download`, null, true));
  const doc = GristDoc.open(path);
  try {
    const bodies = doc.db
      .prepare('SELECT body FROM _gristsys_ActionHistory ORDER BY actionNum DESC LIMIT 4')
      .pluck()
      .all();
    return bodies.reverse().map((body) => {
      const b = decodeBundle(body);
      const meta = (a) => String(a[1]).startsWith('_grist');
      return {
        userActions: b.userActions,
        undo: b.undo.filter((a) => !meta(a)),
        metaUndo: b.undo.filter(meta),
        stored: b.stored.map(([, a]) => a),
      };
    });
  } finally {
    doc.close();
  }
}
const undoGl = await undoOf(GL);
const undoGr = await undoOf(GR);
out.undo = {gristlite: undoGl, grist: undoGr};
const same = (k) => undoGl.map((u, i) => JSON.stringify(u[k]) === JSON.stringify(undoGr[i][k]));
console.log(
  'undo of user tables (RemoveColumn, RemoveColumn of a formula, AddTable + rows, RemoveTable):',
  same('undo'),
);
console.log('  metadata undo (reported):', same('metaUndo'), ' stored actions (reported):', same('stored'));

const verdict = {
  sameStates: out.sameStates,
  sameCompare: out.sameCompare,
  sameStates2: out.sameStates2,
  sameStates3: out.sameStates3,
  sameCompare3: out.sameCompare3,
  sameUndo: same('undo').every(Boolean),
  states: [glStates.length, grStates.length, grStates2.length, glStates2.length, glStates3.length, grStates3.length],
};
console.log(verdict);
process.exit(Object.entries(verdict).every(([k, v]) => k === 'states' || v === true) ? 0 : 1);
