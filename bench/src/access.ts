/**
 * Access-rule scenarios (issue 27), in-process. Each is compared with the same work on the same
 * document without rules, measured in the same run (the limit): a read of every row under a
 * one-condition row rule, a write under row rules, and compiling a document's 50 rules.
 */
import {join} from 'node:path';
import {AccessContext, GristDoc, RuleSet} from '@gristlite/core/internal';
import {latencies, makeRows, percentile, type Result} from './lib.js';
import {result} from './scenarios.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const EMAIL = 'kiwi@example.com';

function build(path: string): GristDoc {
  const doc = GristDoc.create(path);
  doc.addTables([
    {id: 'Tick', columns: [{id: 'N', fields: {type: 'Int'}}]},
    {
      id: 'Items',
      columns: [
        {id: 'Name', fields: {type: 'Text'}},
        {id: 'Qty', fields: {type: 'Int'}},
        {id: 'Price', fields: {type: 'Numeric'}},
        {id: 'Owner', fields: {type: 'Text'}},
      ],
    },
  ]);
  doc.addRecords('Tick', [{N: 0}]);
  const rows = makeRows(ROWS);
  for (let i = 0; i < ROWS; i += 10_000) {
    const part = rows.slice(i, i + 10_000);
    doc.addColumnar(
      'Items',
      {
        Name: part.map((r) => r.Name),
        Qty: part.map((r) => r.Qty),
        Price: part.map((r) => r.Price),
        // Every row is kiwi's: the rule is evaluated on every row and lets every row through.
        Owner: part.map(() => EMAIL),
      },
      {parse: false},
    );
  }
  return doc;
}

/** Rule actions: `rec.Owner != user.Email` denies reads and updates, plus `extra` no-op column rules. */
function rules(extra = 0): unknown[][] {
  const out: unknown[][] = [
    ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Items', colIds: '*'}],
    [
      'AddRecord',
      '_grist_ACLRules',
      null,
      {resource: -1, aclFormula: 'rec.Owner != user.Email', permissionsText: '-RU', rulePos: 1},
    ],
  ];
  if (extra) {
    out.push(['AddRecord', '_grist_ACLResources', -2, {tableId: 'Items', colIds: 'Qty'}]);
    out.push(['AddRecord', '_grist_ACLResources', -3, {tableId: 'Items', colIds: 'Price'}]);
  }
  for (let i = 0; i < extra; i++) {
    out.push([
      'AddRecord',
      '_grist_ACLRules',
      null,
      {
        resource: i % 2 ? -2 : -3,
        aclFormula: `user.Email == "u${i}@example.com" and rec.Qty > ${i}`,
        permissionsText: '-R',
        rulePos: i + 2,
      },
    ]);
  }
  return out;
}

function contextFor(doc: GristDoc, rs: RuleSet): AccessContext {
  return new AccessContext(
    rs,
    {access: 'editors', userId: 2, email: EMAIL, name: 'Kiwi', userRef: 'k'},
    (t, c, v, ci) => doc.lookupRow(t, c, v, ci),
  );
}

export async function accessScenarios(dir: string): Promise<Result[]> {
  const results: Result[] = [];
  const plain = build(join(dir, 'acl-plain.grist'));
  const ruled = build(join(dir, 'acl-ruled.grist'));
  ruled.applyUserActions(rules());
  const rs = RuleSet.read(ruled.db)!;

  // A1. Every row read as JSON (what GET /records sends), with and without the row rule; cold:
  // a write before each read makes the cached answer of the unfiltered read stale.
  let tick = 0;
  const reads = (doc: GristDoc, guarded: boolean) =>
    latencies(
      5,
      () => (guarded ? doc.as(contextFor(doc, rs)) : doc).fetchRecordsJson('Items'),
      () => doc.updateRecords('Tick', [{id: 1, fields: {N: ++tick}}]),
    );
  const plainRead = percentile(await reads(plain, false), 50);
  const ruledRead = percentile(await reads(ruled, true), 50);
  results.push(
    result({
      scenario: `A1. read ${ROWS} rows under a one-condition row rule`,
      unit: 'rows/s',
      rate: ROWS / (ruledRead / 1000),
      limit: ROWS / (plainRead / 1000),
      ratioTarget: 1 / 1.5,
      target: '>= 0.67 of the same read without rules (<= 1.5x its time)',
      p50Ms: ruledRead,
    }),
  );

  // A2. A 100-row update (one column), checked row by row against `rec` and `newRec`.
  let n = 0;
  const ids = Array.from({length: 100}, (_, i) => i + 1);
  const writes = (doc: GristDoc, guarded: boolean) =>
    latencies(200, () => {
      n++;
      const seen = guarded ? doc.as(contextFor(doc, rs)) : doc;
      seen.updateRecords(
        'Items',
        ids.map((id) => ({id, fields: {Qty: n}})),
      );
    });
  const plainWrite = percentile(await writes(plain, false), 50);
  const ruledWrite = percentile(await writes(ruled, true), 50);
  results.push(
    result({
      scenario: 'A2. update 100 rows under a row rule',
      unit: 'writes/s',
      rate: 1000 / ruledWrite,
      limit: 1000 / plainWrite,
      ratioTarget: 1 / 1.5,
      target: '>= 0.67 of the same write without rules (<= 1.5x its time)',
      p50Ms: ruledWrite,
    }),
  );

  // A3. Reading and compiling a document's 50 rules (what happens once per rules version).
  const many = GristDoc.create(join(dir, 'acl-many.grist'));
  many.addTables([{id: 'Items', columns: [{id: 'Qty', fields: {type: 'Int'}}, {id: 'Price'}, {id: 'Owner'}]}]);
  many.applyUserActions(rules(49));
  const compile = percentile(await latencies(20, () => RuleSet.read(many.db)), 50);
  results.push(
    result({
      scenario: 'A3. compile a document of 50 rules',
      unit: 'compiles/s',
      rate: 1000 / compile,
      limit: null,
      maxMs: 5,
      target: 'p50 < 5 ms',
      p50Ms: compile,
    }),
  );
  for (const d of [plain, ruled, many]) d.close();
  return results;
}
