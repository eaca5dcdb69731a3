/**
 * Formulas computed by the server (issue 14): every write path (/records, /data, /apply,
 * add-or-update) updates dependent cells (same row, references, lookups, display helpers) in the
 * same write; new formula columns compute at once; formula edits recompute; error cells read as
 * Grist gives them (/records null + errors, /data raw, CSV `#DIV/0!`); renames rewrite formulas.
 */
import * as assert from 'uvu/assert';
import { tablePath } from './docdata.js';
import { areaSuite, ok, useWorld, type Target } from './world.js';

export function formulasSuite(target: Target): void {
  const s = areaSuite(target, 'formulas');
  const world = useWorld(s, target);
  let doc = '';

  const data = async (table: string) => ok(await world().api.get(`${tablePath(doc, table)}/data`, world().chimpy.as)).body;

  s('a document with references and lookups computes on every write path', async () => {
    const { api, chimpy } = world();
    doc = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Formulas');
    ok(await api.post(`/api/docs/${doc}/tables`, { tables: [
      { id: 'Customers', columns: [{ id: 'Name', fields: { type: 'Text' } }] },
      { id: 'Orders', columns: [
        { id: 'Customer', fields: { type: 'Ref:Customers' } },
        { id: 'Price', fields: { type: 'Numeric' } },
        { id: 'Qty', fields: { type: 'Int' } },
        { id: 'Total', fields: { type: 'Numeric', isFormula: true, formula: '$Price * $Qty' } },
        { id: 'Who', fields: { type: 'Text', isFormula: true, formula: '$Customer.Name' } },
      ] },
    ] }, chimpy.as));
    ok(await api.post(`${tablePath(doc, 'Customers')}/columns`, { columns: [
      { id: 'Spent', fields: { type: 'Numeric', isFormula: true, formula: 'SUM(Orders.lookupRecords(Customer=$id).Total)' } },
    ] }, chimpy.as));
    ok(await api.post(`${tablePath(doc, 'Customers')}/records`, { records: [{ fields: { Name: 'Ann' } }, { fields: { Name: 'Bob' } }] }, chimpy.as));
    ok(await api.post(`${tablePath(doc, 'Orders')}/records`, { records: [
      { fields: { Customer: 1, Price: 2.5, Qty: 4 } }, { fields: { Customer: 2, Price: 3, Qty: 1 } },
    ] }, chimpy.as));
    assert.equal((await data('Orders')).Total, [10, 3]);
    assert.equal((await data('Orders')).Who, ['Ann', 'Bob']);
    assert.equal((await data('Customers')).Spent, [10, 3]);
    // /data
    ok(await api.patch(`${tablePath(doc, 'Orders')}/data`, { id: [2], Qty: [5] }, chimpy.as));
    assert.equal((await data('Customers')).Spent, [10, 15]);
    ok(await api.post(`${tablePath(doc, 'Orders')}/data`, { Customer: [1], Price: [1], Qty: [1] }, chimpy.as));
    assert.equal((await data('Customers')).Spent, [11, 15]);
    // /records PATCH through a reference
    ok(await api.patch(`${tablePath(doc, 'Customers')}/records`, { records: [{ id: 1, fields: { Name: 'Anna' } }] }, chimpy.as));
    assert.equal((await data('Orders')).Who, ['Anna', 'Bob', 'Anna']);
    // add-or-update
    ok(await api.call('PUT', `${tablePath(doc, 'Orders')}/records`, { ...chimpy.as, json: { records: [
      { require: { Customer: 2, Price: 3 }, fields: { Qty: 2 } },
    ] } }));
    assert.equal((await data('Customers')).Spent, [11, 6]);
    // /apply: several actions, one recalc
    ok(await api.post(`/api/docs/${doc}/apply`, [
      ['AddRecord', 'Customers', null, { Name: 'Cy' }],
      ['AddRecord', 'Orders', null, { Customer: 3, Price: 7, Qty: 1 }],
    ], chimpy.as));
    assert.equal((await data('Customers')).Spent, [11, 6, 7]);
  });

  s('new formula columns compute at once; edits recompute; errors read as Grist gives them', async () => {
    const { api, chimpy } = world();
    ok(await api.post(`${tablePath(doc, 'Orders')}/columns`, { columns: [
      { id: 'Double', fields: { isFormula: true, formula: '$Price * 2' } },
    ] }, chimpy.as));
    assert.equal((await data('Orders')).Double, [5, 6, 2, 14]);
    ok(await api.post(`/api/docs/${doc}/apply`, [['ModifyColumn', 'Orders', 'Double', { formula: '$Qty / ($Price - 1)' }]], chimpy.as));
    const d = (await data('Orders')).Double;
    assert.equal(d[2], ['E', 'ZeroDivisionError']);
    const recs = ok(await api.get(`${tablePath(doc, 'Orders')}/records`, chimpy.as)).body.records;
    assert.is(recs[2].fields.Double, null);
    assert.equal(recs[2].errors, { Double: 'ZeroDivisionError' });
    assert.is(recs[0].errors, undefined);
    const csv = ok(await api.get(`/api/docs/${doc}/download/csv?tableId=Orders`, chimpy.as)).text;
    assert.match(csv.split('\n')[3], /#DIV\/0!/);
  });

  s('renames rewrite dependent formulas; display helpers follow', async () => {
    const { api, chimpy } = world();
    ok(await api.patch(`${tablePath(doc, 'Customers')}/columns`, { columns: [{ id: 'Name', fields: { colId: 'FullName' } }] }, chimpy.as));
    const cols = ok(await api.get(`${tablePath(doc, 'Orders')}/columns`, chimpy.as)).body.columns as Array<{ id: string; fields: { formula: string } }>;
    assert.is(cols.find((c) => c.id === 'Who')!.fields.formula, '$Customer.FullName');
    ok(await api.post(`/api/docs/${doc}/apply`, [
      ['AddHiddenColumn', 'Orders', 'gristHelper_Display', { type: 'Any', isFormula: true, formula: '$Customer.FullName' }],
      ['UpdateRecord', 'Customers', 2, { FullName: 'Rob' }],
    ], chimpy.as));
    const orders = await data('Orders');
    assert.equal(orders.Who, ['Anna', 'Rob', 'Anna', 'Cy']);
    assert.equal(orders.gristHelper_Display, ['Anna', 'Rob', 'Anna', 'Cy']);
  });

  s('a write that fails leaves formula cells as they were', async () => {
    const { api, chimpy } = world();
    const before = await data('Customers');
    const res = await api.post(`/api/docs/${doc}/apply`, [
      ['UpdateRecord', 'Orders', 1, { Qty: 1000 }],
      ['UpdateRecord', 'Orders', 999, { Qty: 1 }],
    ], chimpy.as);
    assert.ok(res.status >= 400);
    assert.equal(await data('Customers'), before);
    ok(await api.patch(`${tablePath(doc, 'Orders')}/records`, { records: [{ id: 1, fields: { Qty: 2 } }] }, chimpy.as));
    assert.equal((await data('Customers')).Spent[0], 6);
  });

  s.run();
}
