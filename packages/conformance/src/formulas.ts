/**
 * Formulas computed by the server (issue 14), through the HTTP API only: every write path
 * (/records POST and PATCH, PUT add-or-update, /data, /apply user actions, `.grist` uploads)
 * updates the cells that depend on it in the same write: same row, through references and chains,
 * lookups, summary groups and display helper columns. New formula columns compute at once; edits
 * recompute; errors and cycles read as Grist gives them; trigger formulas follow `recalcWhen`;
 * renames rewrite formulas.
 */
import {existsSync, mkdtempSync, readFileSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import Database from 'better-sqlite3';
import * as assert from 'uvu/assert';
import {copyFixture, findFixtures, underCi, withFixtures} from '@gristlite/core/testing';
import {multipart} from './attachments.js';
import {tablePath} from './docdata.js';
import {areaSuite, isErrorLike, ok, useWorld, type Target} from './world.js';

interface ColumnInfo {
  id: string;
  fields: {colRef: number; formula: string; type: string; displayCol: number; visibleCol: number; isFormula: boolean};
}

export function formulasSuite(target: Target): void {
  const s = areaSuite(target, 'formulas');
  const world = useWorld(s, target);
  let doc = '';

  const data = async (table: string, d = doc) =>
    ok(await world().api.get(`${tablePath(d, table)}/data`, world().chimpy.as)).body;
  const apply = async (actions: unknown[], d = doc) =>
    ok(await world().api.post(`/api/docs/${d}/apply`, actions, world().chimpy.as)).body;
  const columns = async (table: string, d = doc): Promise<ColumnInfo[]> =>
    ok(await world().api.get(`${tablePath(d, table)}/columns?hidden=true`, world().chimpy.as)).body.columns;
  const column = async (table: string, colId: string, d = doc) =>
    (await columns(table, d)).find((c) => c.id === colId)!;
  const newDoc = async (name: string) => world().newDoc(world().chimpy, await world().homeWs(world().chimpy), name);

  s('references, chains and lookups follow every write path', async () => {
    const {api, chimpy} = world();
    doc = await newDoc('Formulas');
    ok(
      await api.post(
        `/api/docs/${doc}/tables`,
        {
          tables: [
            {id: 'Customers', columns: [{id: 'Name', fields: {type: 'Text'}}]},
            {
              id: 'Orders',
              columns: [
                {id: 'Customer', fields: {type: 'Ref:Customers'}},
                {id: 'Price', fields: {type: 'Numeric'}},
                {id: 'Qty', fields: {type: 'Int'}},
                {id: 'Total', fields: {type: 'Numeric', isFormula: true, formula: '$Price * $Qty'}},
                {id: 'Who', fields: {type: 'Text', isFormula: true, formula: '$Customer.Name'}},
              ],
            },
            {
              id: 'Lines',
              columns: [
                {id: 'Order', fields: {type: 'Ref:Orders'}},
                {id: 'Buyer', fields: {type: 'Text', isFormula: true, formula: '$Order.Customer.Name'}},
              ],
            },
          ],
        },
        chimpy.as,
      ),
    );
    ok(
      await api.post(
        `${tablePath(doc, 'Customers')}/columns`,
        {
          columns: [
            {
              id: 'Spent',
              fields: {type: 'Numeric', isFormula: true, formula: 'SUM(Orders.lookupRecords(Customer=$id).Total)'},
            },
            {id: 'Count', fields: {type: 'Int', isFormula: true, formula: 'len(Orders.lookupRecords(Customer=$id))'}},
          ],
        },
        chimpy.as,
      ),
    );
    const customers = async () => {
      const c = await data('Customers');
      return {Spent: c.Spent, Count: c.Count};
    };
    ok(
      await api.post(
        `${tablePath(doc, 'Customers')}/records`,
        {records: [{fields: {Name: 'Ann'}}, {fields: {Name: 'Bob'}}]},
        chimpy.as,
      ),
    );
    ok(
      await api.post(
        `${tablePath(doc, 'Orders')}/records`,
        {records: [{fields: {Customer: 1, Price: 2.5, Qty: 4}}, {fields: {Customer: 2, Price: 3, Qty: 1}}]},
        chimpy.as,
      ),
    );
    assert.equal((await data('Orders')).Total, [10, 3]);
    assert.equal((await data('Orders')).Who, ['Ann', 'Bob']);
    assert.equal(await customers(), {Spent: [10, 3], Count: [1, 1]});
    ok(
      await api.post(
        `${tablePath(doc, 'Lines')}/records`,
        {records: [{fields: {Order: 1}}, {fields: {Order: 2}}, {fields: {Order: 1}}]},
        chimpy.as,
      ),
    );
    assert.equal((await data('Lines')).Buyer, ['Ann', 'Bob', 'Ann']);

    // /data, both ways
    ok(await api.patch(`${tablePath(doc, 'Orders')}/data`, {id: [2], Qty: [5]}, chimpy.as));
    assert.equal(await customers(), {Spent: [10, 15], Count: [1, 1]});
    ok(await api.post(`${tablePath(doc, 'Orders')}/data`, {Customer: [1], Price: [1], Qty: [1]}, chimpy.as));
    assert.equal(await customers(), {Spent: [11, 15], Count: [2, 1]});

    // /records PATCH: through a reference, and through a chain of two
    ok(
      await api.patch(
        `${tablePath(doc, 'Customers')}/records`,
        {records: [{id: 1, fields: {Name: 'Anna'}}]},
        chimpy.as,
      ),
    );
    assert.equal((await data('Orders')).Who, ['Anna', 'Bob', 'Anna']);
    assert.equal((await data('Lines')).Buyer, ['Anna', 'Bob', 'Anna']);
    // Changing a reference moves the row between lookups, and what reads through it follows.
    ok(await api.patch(`${tablePath(doc, 'Orders')}/records`, {records: [{id: 2, fields: {Customer: 1}}]}, chimpy.as));
    assert.equal(await customers(), {Spent: [26, 0], Count: [3, 0]});
    assert.equal((await data('Lines')).Buyer, ['Anna', 'Anna', 'Anna']);
    ok(await api.patch(`${tablePath(doc, 'Orders')}/records`, {records: [{id: 2, fields: {Customer: 2}}]}, chimpy.as));
    assert.equal(await customers(), {Spent: [11, 15], Count: [2, 1]});

    // add-or-update: one record updates, one adds
    ok(
      await api.call('PUT', `${tablePath(doc, 'Orders')}/records`, {
        ...chimpy.as,
        json: {
          records: [
            {require: {Customer: 2, Price: 3}, fields: {Qty: 2}},
            {require: {Customer: 2, Price: 10}, fields: {Qty: 1}},
          ],
        },
      }),
    );
    assert.equal((await data('Orders')).Total, [10, 6, 1, 10]);
    assert.equal(await customers(), {Spent: [11, 16], Count: [2, 2]});

    // /apply: several actions, one recalc at the end
    ok(
      await api.post(
        `/api/docs/${doc}/apply`,
        [
          ['AddRecord', 'Customers', null, {Name: 'Cy'}],
          ['AddRecord', 'Orders', null, {Customer: 3, Price: 7, Qty: 1}],
          ['BulkUpdateRecord', 'Orders', [1, 3], {Qty: [1, 2]}],
        ],
        chimpy.as,
      ),
    );
    assert.equal(await customers(), {Spent: [4.5, 16, 7], Count: [2, 2, 1]});
    await apply([['RemoveRecord', 'Orders', 4]]);
    assert.equal(await customers(), {Spent: [4.5, 6, 7], Count: [2, 1, 1]});
    // Removing a customer clears the references to it (as Grist does); what read through them follows.
    await apply([['RemoveRecord', 'Customers', 2]]);
    const orders = await data('Orders');
    assert.equal(
      [orders.id, orders.Customer, orders.Who],
      [
        [1, 2, 3, 5],
        [1, 0, 1, 3],
        ['Anna', '', 'Anna', 'Cy'],
      ],
    );
    assert.equal((await data('Lines')).Buyer, ['Anna', '', 'Anna']);
    assert.equal(await customers(), {Spent: [4.5, 7], Count: [2, 1]});
  });

  s('schema actions: new formula columns compute at once; edits recompute; renames rewrite formulas', async () => {
    const {api, chimpy} = world();
    // Orders: ids 1, 2, 3, 5; Price 2.5, 3, 1, 7; Qty 1, 2, 2, 1.
    ok(
      await api.post(
        `${tablePath(doc, 'Orders')}/columns`,
        {columns: [{id: 'Double', fields: {isFormula: true, formula: '$Price * 2'}}]},
        chimpy.as,
      ),
    );
    assert.equal((await data('Orders')).Double, [5, 6, 2, 14]);
    await apply([['ModifyColumn', 'Orders', 'Double', {formula: '$Qty * 10'}]]);
    assert.equal((await data('Orders')).Double, [10, 20, 20, 10]);
    await apply([['AddColumn', 'Orders', 'Big', {type: 'Bool', isFormula: true, formula: '$Total > 5'}]]);
    assert.equal((await data('Orders')).Big, [false, true, false, true]);
    await apply([
      ['AddTable', 'Stats', [{id: 'N', type: 'Int', isFormula: true, formula: 'len(Orders.all)'}]],
      ['AddRecord', 'Stats', null, {}],
    ]);
    assert.equal((await data('Stats')).N, [4]);

    // RenameColumn and RenameTable rewrite the formulas that name them, which keep computing.
    await apply([
      ['RenameColumn', 'Customers', 'Name', 'FullName'],
      ['RenameTable', 'Orders', 'Sales'],
    ]);
    assert.is((await column('Sales', 'Who')).fields.formula, '$Customer.FullName');
    assert.is((await column('Lines', 'Buyer')).fields.formula, '$Order.Customer.FullName');
    assert.is((await column('Lines', 'Order')).fields.type, 'Ref:Sales');
    assert.is((await column('Stats', 'N')).fields.formula, 'len(Sales.all)');
    assert.is((await column('Customers', 'Spent')).fields.formula, 'SUM(Sales.lookupRecords(Customer=$id).Total)');
    ok(
      await api.patch(
        `${tablePath(doc, 'Customers')}/records`,
        {records: [{id: 1, fields: {FullName: 'Ann'}}]},
        chimpy.as,
      ),
    );
    assert.equal((await data('Sales')).Who, ['Ann', '', 'Ann', 'Cy']);
    assert.equal((await data('Lines')).Buyer, ['Ann', '', 'Ann']);
    ok(
      await api.post(
        `${tablePath(doc, 'Sales')}/records`,
        {records: [{fields: {Customer: 1, Price: 1, Qty: 1}}]},
        chimpy.as,
      ),
    );
    assert.equal((await data('Stats')).N, [5]);
    assert.equal((await data('Customers')).Spent, [5.5, 7]);
    // PATCH /columns renames as well.
    ok(
      await api.patch(
        `${tablePath(doc, 'Sales')}/columns`,
        {columns: [{id: 'Qty', fields: {colId: 'Quantity'}}]},
        chimpy.as,
      ),
    );
    assert.is((await column('Sales', 'Total')).fields.formula, '$Price * $Quantity');
    assert.is((await column('Sales', 'Double')).fields.formula, '$Quantity * 10');
    // PATCH /tables renames a table as RenameTable does.
    ok(await api.patch(`/api/docs/${doc}/tables`, {tables: [{id: 'Sales', fields: {tableId: 'Deals'}}]}, chimpy.as));
    assert.is((await column('Stats', 'N')).fields.formula, 'len(Deals.all)');
    ok(
      await api.post(
        `${tablePath(doc, 'Deals')}/records`,
        {records: [{fields: {Customer: 3, Price: 1, Quantity: 1}}]},
        chimpy.as,
      ),
    );
    assert.equal((await data('Stats')).N, [6]);
    await apply([
      ['RemoveRecord', 'Deals', 7],
      ['RenameTable', 'Deals', 'Sales'],
    ]);
    assert.equal((await data('Stats')).N, [5]);
    assert.is((await column('Customers', 'Spent')).fields.formula, 'SUM(Sales.lookupRecords(Customer=$id).Total)');
  });

  s('errors read as Grist gives them: /records null plus errors, /data raw, CSV text; cycles', async () => {
    const {api, chimpy} = world();
    await apply([['ModifyColumn', 'Sales', 'Double', {formula: '$Quantity / ($Price - 1)'}]]);
    const d = (await data('Sales')).Double;
    assert.equal(d[2], ['E', 'ZeroDivisionError']);
    const recs = ok(await api.get(`${tablePath(doc, 'Sales')}/records`, chimpy.as)).body.records;
    assert.is(recs[2].fields.Double, null);
    assert.equal(recs[2].errors, {Double: 'ZeroDivisionError'});
    assert.is(recs[0].errors, undefined);
    const csv = ok(await api.get(`/api/docs/${doc}/download/csv?tableId=Sales`, chimpy.as)).text;
    assert.match(csv.split('\n')[3], /#DIV\/0!/);

    // A formula reading an error cell raises the same error; a cycle gives CircularRefError.
    await apply([
      ['AddTable', 'Loop', [{id: 'A', type: 'Numeric', isFormula: false}]],
      ['AddColumn', 'Loop', 'B', {isFormula: true, formula: '$C + 1'}],
      ['AddColumn', 'Loop', 'C', {isFormula: true, formula: '$B + $A'}],
      ['AddColumn', 'Loop', 'Bad', {isFormula: true, formula: '$Nope'}],
      ['AddColumn', 'Loop', 'Syntax', {isFormula: true, formula: '1 +'}],
      ['AddRecord', 'Loop', null, {A: 1}],
    ]);
    const loop = ok(await api.get(`${tablePath(doc, 'Loop')}/records`, chimpy.as)).body.records;
    assert.equal(loop, [
      {
        id: 1,
        fields: {A: 1, B: null, C: null, Bad: null, Syntax: null},
        errors: {B: 'CircularRefError', C: 'CircularRefError', Bad: 'AttributeError', Syntax: 'SyntaxError'},
      },
    ]);
    assert.equal((await data('Loop')).B, [['E', 'CircularRefError']]);
    // Breaking the cycle recomputes both.
    await apply([['ModifyColumn', 'Loop', 'B', {formula: '10'}]]);
    assert.equal(ok(await api.get(`${tablePath(doc, 'Loop')}/records`, chimpy.as)).body.records[0].fields, {
      A: 1,
      B: 10,
      C: 11,
      Bad: null,
      Syntax: null,
    });
  });

  s("NOW() and TODAY() run in the document's time zone", async () => {
    const d = await newDoc('Clock');
    await apply([['UpdateRecord', '_grist_DocInfo', 1, {timezone: 'Asia/Tokyo'}]], d);
    await apply(
      [
        ['AddColumn', 'Table1', 'Now', {isFormula: true, formula: 'NOW()'}],
        ['AddColumn', 'Table1', 'Today', {type: 'Date', isFormula: true, formula: 'TODAY()'}],
        ['AddRecord', 'Table1', null, {}],
      ],
      d,
    );
    const t = await data('Table1', d);
    const [tag, ts, zone] = t.Now[0];
    assert.equal([tag, zone], ['D', 'Asia/Tokyo']);
    assert.ok(Math.abs(ts * 1000 - Date.now()) < 60_000, `NOW() is now: ${ts}`);
    // TODAY() is the date in Tokyo at that instant, stored as its midnight UTC in seconds.
    const day = new Intl.DateTimeFormat('en-CA', {timeZone: 'Asia/Tokyo'}).format(new Date(ts * 1000));
    assert.is(t.Today[0], Date.parse(`${day}T00:00:00Z`) / 1000);
  });

  s(
    'trigger formulas: recalcWhen 0 (new records, recalcDeps), 1 (never), 2 (any update); explicit values win',
    async () => {
      const {api, chimpy} = world();
      ok(
        await api.post(
          `/api/docs/${doc}/tables`,
          {
            tables: [
              {
                id: 'Trig',
                columns: [
                  {id: 'Name', fields: {type: 'Text'}},
                  {id: 'Count', fields: {type: 'Int'}},
                ],
              },
            ],
          },
          chimpy.as,
        ),
      );
      const nameRef = (await column('Trig', 'Name')).fields.colRef;
      ok(
        await api.post(
          `${tablePath(doc, 'Trig')}/columns`,
          {
            columns: [
              {id: 'OnNew', fields: {type: 'Text', isFormula: false, formula: '$Name + "!"', recalcWhen: 0}},
              {
                id: 'OnName',
                fields: {
                  type: 'Text',
                  isFormula: false,
                  formula: '$Name.upper()',
                  recalcWhen: 0,
                  recalcDeps: ['L', nameRef],
                },
              },
              {id: 'Never', fields: {type: 'Text', isFormula: false, formula: '$Name', recalcWhen: 1}},
              {id: 'OnAny', fields: {type: 'Int', isFormula: false, formula: '$Count * 10', recalcWhen: 2}},
            ],
          },
          chimpy.as,
        ),
      );
      const trig = async () => {
        const t = await data('Trig');
        return [t.OnNew, t.OnName, t.Never, t.OnAny];
      };
      ok(await api.post(`${tablePath(doc, 'Trig')}/records`, {records: [{fields: {Name: 'a', Count: 1}}]}, chimpy.as));
      assert.equal(await trig(), [['a!'], ['A'], [''], [10]]);
      ok(
        await api.post(
          `${tablePath(doc, 'Trig')}/records`,
          {records: [{fields: {Name: 'b', Count: 2, OnNew: 'given', OnName: 'given'}}]},
          chimpy.as,
        ),
      );
      assert.equal(await trig(), [
        ['a!', 'given'],
        ['A', 'given'],
        ['', ''],
        [10, 20],
      ]);
      ok(await api.patch(`${tablePath(doc, 'Trig')}/records`, {records: [{id: 1, fields: {Count: 5}}]}, chimpy.as));
      assert.equal(await trig(), [
        ['a!', 'given'],
        ['A', 'given'],
        ['', ''],
        [50, 20],
      ]);
      ok(await api.patch(`${tablePath(doc, 'Trig')}/data`, {id: [1], Name: ['c']}, chimpy.as));
      assert.equal(await trig(), [
        ['a!', 'given'],
        ['C', 'given'],
        ['', ''],
        [50, 20],
      ]);
      ok(
        await api.patch(
          `${tablePath(doc, 'Trig')}/records`,
          {records: [{id: 2, fields: {Name: 'd', OnName: 'mine'}}]},
          chimpy.as,
        ),
      );
      assert.equal(await trig(), [
        ['a!', 'given'],
        ['C', 'mine'],
        ['', ''],
        [50, 20],
      ]);
      await apply([['UpdateRecord', 'Trig', 2, {OnAny: 7}]]);
      assert.equal((await data('Trig')).OnAny, [50, 7]);

      // A document's first formula is a trigger formula, with an update in the same bundle.
      const d = await newDoc('FirstTrigger');
      await apply([['AddRecord', 'Table1', null, {A: 2}]], d);
      await apply(
        [
          ['AddColumn', 'Table1', 'Ten', {type: 'Numeric', isFormula: false, formula: '10 / $A', recalcWhen: 2}],
          ['UpdateRecord', 'Table1', 1, {A: 4}],
        ],
        d,
      );
      assert.equal((await data('Table1', d)).Ten, [2.5]);
      // A trigger formula that raises keeps the previous value with the error, as Grist stores it.
      await apply([['UpdateRecord', 'Table1', 1, {A: 0}]], d);
      const err = (await data('Table1', d)).Ten[0];
      assert.equal([err[0], err[1], err[err.length - 1]], ['E', 'ZeroDivisionError', {u: 2.5}]);
      const rec = ok(await api.get(`${tablePath(d)}/records`, chimpy.as)).body.records[0];
      assert.equal([rec.fields.Ten, rec.errors], [null, {Ten: 'ZeroDivisionError'}]);
    },
  );

  s(
    'display helper columns: SetDisplayFormula creates, shares, updates and removes them; they follow the data',
    async () => {
      const {api, chimpy} = world();
      const d = await newDoc('Display');
      ok(
        await api.post(
          `/api/docs/${d}/tables`,
          {
            tables: [
              {
                id: 'People',
                columns: [
                  {id: 'Name', fields: {type: 'Text'}},
                  {id: 'Code', fields: {type: 'Text'}},
                ],
              },
              {id: 'Pets', columns: [{id: 'Kind', fields: {type: 'Text'}}]},
            ],
          },
          chimpy.as,
        ),
      );
      const nameRef = (await column('People', 'Name', d)).fields.colRef;
      // Grist's REST API sets visibleCol and nothing else: its client then sends SetDisplayFormula.
      ok(
        await api.post(
          `${tablePath(d, 'Pets')}/columns`,
          {columns: [{id: 'Owner', fields: {type: 'Ref:People', visibleCol: nameRef}}]},
          chimpy.as,
        ),
      );
      const owner = await column('Pets', 'Owner', d);
      assert.equal([owner.fields.visibleCol, owner.fields.displayCol], [nameRef, 0]);
      assert.equal(
        (await columns('Pets', d)).map((c) => c.id),
        ['manualSort', 'Kind', 'Owner'],
      );

      ok(
        await api.post(
          `${tablePath(d, 'People')}/records`,
          {records: [{fields: {Name: 'Ann', Code: 'a1'}}, {fields: {Name: 'Bob', Code: 'b2'}}]},
          chimpy.as,
        ),
      );
      // Ref values given as display text are looked up in the visible column.
      ok(
        await api.post(
          `${tablePath(d, 'Pets')}/records`,
          {records: [{fields: {Kind: 'cat', Owner: 'Ann'}}, {fields: {Kind: 'dog', Owner: 2}}]},
          chimpy.as,
        ),
      );
      await apply([['SetDisplayFormula', 'Pets', null, owner.fields.colRef, '$Owner.Name']], d);
      const helper = await column('Pets', 'gristHelper_Display', d);
      assert.equal([helper.fields.formula, helper.fields.type, helper.fields.isFormula], ['$Owner.Name', 'Any', true]);
      assert.is((await column('Pets', 'Owner', d)).fields.displayCol, helper.fields.colRef);
      assert.equal((await data('Pets', d)).gristHelper_Display, ['Ann', 'Bob']);
      // Hidden from /records unless asked.
      const recs = ok(await api.get(`${tablePath(d, 'Pets')}/records`, chimpy.as)).body.records;
      assert.equal(recs[0].fields, {Kind: 'cat', Owner: 1});

      // The display follows the referenced row's visible column, the reference, and new rows.
      ok(await api.patch(`${tablePath(d, 'People')}/records`, {records: [{id: 1, fields: {Name: 'Anna'}}]}, chimpy.as));
      ok(await api.patch(`${tablePath(d, 'Pets')}/records`, {records: [{id: 2, fields: {Owner: 1}}]}, chimpy.as));
      ok(await api.post(`${tablePath(d, 'Pets')}/data`, {Kind: ['fish'], Owner: [2]}, chimpy.as));
      assert.equal((await data('Pets', d)).gristHelper_Display, ['Anna', 'Anna', 'Bob']);

      // Records, record sets and dicts in Any columns keep Grist's encoding (objtypes: R, r, O).
      await apply(
        [
          ['AddColumn', 'Pets', 'OwnerRec', {isFormula: true, formula: '$Owner'}],
          ['AddColumn', 'Pets', 'Same', {isFormula: true, formula: 'People.lookupRecords(Code=$Owner.Code)'}],
          ['AddColumn', 'Pets', 'Dict', {isFormula: true, formula: 'RECORD($Owner)'}],
        ],
        d,
      );
      const encoded = await data('Pets', d);
      assert.equal(encoded.OwnerRec, [
        ['R', 'People', 1],
        ['R', 'People', 1],
        ['R', 'People', 2],
      ]);
      assert.equal(encoded.Same, [
        ['r', 'People', [1]],
        ['r', 'People', [1]],
        ['r', 'People', [2]],
      ]);
      assert.equal(encoded.Dict[2][0], 'O');
      assert.equal([encoded.Dict[2][1].id, encoded.Dict[2][1].Name, encoded.Dict[2][1].Code], [2, 'Bob', 'b2']);
      await apply(
        [
          ['RemoveColumn', 'Pets', 'OwnerRec'],
          ['RemoveColumn', 'Pets', 'Same'],
          ['RemoveColumn', 'Pets', 'Dict'],
        ],
        d,
      );

      // Renaming the visible column or the reference rewrites the helper's formula.
      await apply(
        [
          ['RenameColumn', 'People', 'Name', 'FullName'],
          ['RenameColumn', 'Pets', 'Owner', 'Keeper'],
        ],
        d,
      );
      assert.is((await column('Pets', 'gristHelper_Display', d)).fields.formula, '$Keeper.FullName');
      ok(
        await api.patch(`${tablePath(d, 'People')}/records`, {records: [{id: 2, fields: {FullName: 'Bo'}}]}, chimpy.as),
      );
      assert.equal((await data('Pets', d)).gristHelper_Display, ['Anna', 'Anna', 'Bo']);
      await apply(
        [
          ['RenameColumn', 'People', 'FullName', 'Name'],
          ['RenameColumn', 'Pets', 'Keeper', 'Owner'],
        ],
        d,
      );
      assert.is((await column('Pets', 'gristHelper_Display', d)).fields.formula, '$Owner.Name');

      // A new display formula for the only user of a helper changes that helper (a colId names the column too).
      await apply([['SetDisplayFormula', 'Pets', null, 'Owner', '$Owner.Code']], d);
      assert.equal(
        (await columns('Pets', d)).filter((c) => c.id.startsWith('gristHelper')).map((c) => [c.id, c.fields.formula]),
        [['gristHelper_Display', '$Owner.Code']],
      );
      assert.equal((await data('Pets', d)).gristHelper_Display, ['a1', 'a1', 'b2']);

      // A field showing the column with the same formula shares the helper; another formula gets its own.
      const raw = ok(await api.get(`/api/docs/${d}/tables`, chimpy.as)).body.tables.find(
        (t: {id: string}) => t.id === 'Pets',
      ).fields.rawViewSectionRef;
      const allFields = ok(
        await api.get(
          `${tablePath(d, '_grist_Views_section_field')}/records?filter=${encodeURIComponent(JSON.stringify({colRef: [owner.fields.colRef]}))}`,
          chimpy.as,
        ),
      ).body.records;
      // Fields of the raw data widget cannot be changed (Grist: "Cannot modify raw view section fields").
      const rawField = allFields.find((f: {fields: {parentId: number}}) => f.fields.parentId === raw);
      isErrorLike(
        await api.post(
          `/api/docs/${d}/apply`,
          [['SetDisplayFormula', 'Pets', rawField.id, null, '$Owner.Code']],
          chimpy.as,
        ),
        400,
        /raw view section/,
      );
      const fields = allFields.filter((f: {fields: {parentId: number}}) => f.fields.parentId !== raw);
      assert.equal(fields.length, 2, 'the record card and the page widget show the column');
      await apply([['SetDisplayFormula', 'Pets', fields[0].id, null, '$Owner.Code']], d);
      await apply([['SetDisplayFormula', 'Pets', fields[1].id, null, '$Owner.Name']], d);
      assert.equal(
        (await columns('Pets', d)).filter((c) => c.id.startsWith('gristHelper')).map((c) => [c.id, c.fields.formula]),
        [
          ['gristHelper_Display', '$Owner.Code'],
          ['gristHelper_Display2', '$Owner.Name'],
        ],
      );
      assert.equal((await data('Pets', d)).gristHelper_Display2, ['Anna', 'Anna', 'Bo']);
      // An empty formula drops the field's helper, which no one uses any more.
      await apply([['SetDisplayFormula', 'Pets', fields[1].id, null, '']], d);
      assert.equal(
        (await columns('Pets', d)).filter((c) => c.id.startsWith('gristHelper')).map((c) => c.id),
        ['gristHelper_Display'],
      );

      // Between Ref and RefList of the same table, Grist keeps displayCol and visibleCol.
      await apply([['ModifyColumn', 'Pets', 'Owner', {type: 'RefList:People'}]], d);
      const asList = await column('Pets', 'Owner', d);
      assert.equal([asList.fields.displayCol, asList.fields.visibleCol], [helper.fields.colRef, nameRef]);
      // (Lists do not convert to single references: the cells are set again.)
      await apply(
        [
          ['ModifyColumn', 'Pets', 'Owner', {type: 'Ref:People'}],
          ['BulkUpdateRecord', 'Pets', [1, 2, 3], {Owner: [1, 1, 2]}],
        ],
        d,
      );
      assert.is((await column('Pets', 'Owner', d)).fields.displayCol, helper.fields.colRef);
      // Changing the column's type away from a reference clears displayCol; its helper goes with it.
      await apply([['ModifyColumn', 'Pets', 'Owner', {type: 'Int'}]], d);
      assert.equal(
        (await columns('Pets', d)).map((c) => c.id),
        ['manualSort', 'Kind', 'Owner'],
      );
      assert.is((await column('Pets', 'Owner', d)).fields.displayCol, 0);
      // Removing a reference column removes its helper.
      await apply(
        [
          ['ModifyColumn', 'Pets', 'Owner', {type: 'Ref:People'}],
          ['SetDisplayFormula', 'Pets', null, 'Owner', '$Owner.Name'],
        ],
        d,
      );
      assert.equal((await data('Pets', d)).gristHelper_Display, ['Anna', 'Anna', 'Bo']);
      await apply([['RemoveColumn', 'Pets', 'Owner']], d);
      assert.equal(
        (await columns('Pets', d)).map((c) => c.id),
        ['manualSort', 'Kind'],
      );
    },
  );

  const ftest = withFixtures(s);
  ftest('summary tables of an uploaded .grist: recomputed on import; groups follow every write', async () => {
    const corpus = findFixtures()?.corpus;
    const file = corpus ? join(corpus, 'SummaryRulesBug.grist') : '';
    if (!existsSync(file)) {
      if (underCi()) throw new Error('the fixture corpus (grist-corpus/SummaryRulesBug.grist) is needed');
      console.log('SKIPPED (no grist-corpus/SummaryRulesBug.grist): summary tables');
      return;
    }
    const {api, chimpy} = world();
    // A copy whose summary cells are stale: the upload recomputes them, as Grist does on open.
    const dir = mkdtempSync(join(tmpdir(), 'gl-formulas-'));
    let bytes: Buffer;
    try {
      const path = copyFixture(file, dir);
      const db = new Database(path);
      db.prepare('UPDATE GristSummary_6_Table1 SET C = 999, count = 7').run(); // renamed Table1_summary_A by the upgrade
      db.close();
      bytes = readFileSync(path);
    } finally {
      rmSync(dir, {recursive: true, force: true});
    }
    const {body, headers} = multipart([{name: 'Summary.grist', content: bytes}]);
    const d = ok(
      await api.call('POST', `/api/workspaces/${await world().homeWs(chimpy)}/import`, {
        key: chimpy.key,
        body,
        headers,
      }),
    ).body.id;
    const byA = async () => {
      const t = await data('Table1_summary_A', d);
      return {A: t.A, count: t.count, B: t.B, C: t.C, group: t.group};
    };
    const byAB = async () => {
      const t = await data('Table1_summary_A_B', d);
      return {A: t.A, B: t.B, count: t.count, C: t.C};
    };
    // Table1: one row (A 'A', B 1, C 2).
    assert.equal(await byA(), {A: ['A'], count: [1], B: [1], C: [2], group: [['L', 1]]});

    // A new source row joins its group; a new group appears in the table grouped by A and B.
    ok(await api.post(`${tablePath(d, 'Table1')}/records`, {records: [{fields: {A: 'A', B: 2, C: 3}}]}, chimpy.as));
    assert.equal(await byA(), {A: ['A'], count: [2], B: [3], C: [5], group: [['L', 1, 2]]});
    assert.equal(await byAB(), {A: ['A', 'A'], B: [1, 2], count: [1, 1], C: [2, 3]});
    ok(await api.post(`${tablePath(d, 'Table1')}/data`, {A: ['Z'], B: [1], C: [10]}, chimpy.as));
    assert.equal(await byA(), {
      A: ['A', 'Z'],
      count: [2, 1],
      B: [3, 1],
      C: [5, 10],
      group: [
        ['L', 1, 2],
        ['L', 3],
      ],
    });
    // Moving row 1 to group Z empties the group (A, 1) of the second summary: its row goes.
    ok(await api.patch(`${tablePath(d, 'Table1')}/records`, {records: [{id: 1, fields: {A: 'Z'}}]}, chimpy.as));
    assert.equal(await byA(), {
      A: ['A', 'Z'],
      count: [1, 2],
      B: [2, 2],
      C: [3, 12],
      group: [
        ['L', 2],
        ['L', 1, 3],
      ],
    });
    assert.equal(await byAB(), {A: ['A', 'Z'], B: [2, 1], count: [1, 2], C: [3, 12]});
    // Removing the last row of group A removes that group.
    await apply([['RemoveRecord', 'Table1', 2]], d);
    assert.equal(await byA(), {A: ['Z'], count: [2], B: [2], C: [12], group: [['L', 1, 3]]});
    // A formula column added to a summary computes per group at once.
    await apply([['AddColumn', 'Table1_summary_A', 'MaxC', {isFormula: true, formula: 'max($group.C)'}]], d);
    assert.equal((await data('Table1_summary_A', d)).MaxC, [10]);
  });

  s('a write that fails leaves formula cells as they were', async () => {
    const {api, chimpy} = world();
    const before = await data('Customers');
    const res = await api.post(
      `/api/docs/${doc}/apply`,
      [
        ['UpdateRecord', 'Sales', 1, {Quantity: 1000}],
        ['UpdateRecord', 'Sales', 999, {Quantity: 1}],
      ],
      chimpy.as,
    );
    assert.ok(res.status >= 400);
    assert.equal(await data('Customers'), before);
    ok(await api.patch(`${tablePath(doc, 'Sales')}/records`, {records: [{id: 1, fields: {Quantity: 2}}]}, chimpy.as));
    assert.equal((await data('Customers')).Spent[0], 8);
  });

  s("SELF_HYPERLINK(): the document's URL on the host the write came through, with page and link keys", async () => {
    const {api, chimpy} = world();
    const d = await newDoc('Link Book');
    const meta = ok(await api.get(`/api/docs/${d}`, chimpy.as)).body;
    // Behind a proxy: the scheme and host it forwarded (no GRISTLITE_PUBLIC_URL in this world).
    const via = {...chimpy.as, headers: {'x-forwarded-proto': 'https', 'x-forwarded-host': 'grist.example.org'}};
    const formula = 'SELF_HYPERLINK(label=$Code, page=2, LinkKey_Code=$Code)';
    ok(
      await api.post(
        `/api/docs/${d}/apply`,
        [
          [
            'AddTable',
            'Links',
            [
              {id: 'Code', type: 'Text'},
              {id: 'Link', type: 'Text', isFormula: true, formula},
            ],
          ],
        ],
        via,
      ),
    );
    ok(await api.post(`${tablePath(d, 'Links')}/records`, {records: [{fields: {Code: 'Bi Ngo'}}]}, via));
    const url = `https://grist.example.org/o/docs/${meta.urlId}/Link-Book`;
    assert.equal((await data('Links', d)).Link, [`Bi Ngo ${url}/p/2?Code_=Bi+Ngo`]);
    // A link key not of the form LinkKey_NAME is Grist's TypeError, in the cell.
    await apply([['AddColumn', 'Links', 'Bad', {isFormula: true, formula: "SELF_HYPERLINK(Linky_Link='x')"}]], d);
    const bad = (await data('Links', d)).Bad[0];
    assert.equal(bad.slice(0, 2), ['E', 'TypeError']);
    // Without proxy headers: the host the client reached.
    await apply([['AddColumn', 'Links', 'Plain', {isFormula: true, formula: 'SELF_HYPERLINK()'}]], d);
    assert.match((await data('Links', d)).Plain[0], new RegExp(`^https?://[^/]+/o/docs/${meta.urlId}/Link-Book$`));
  });

  s.run();
}
