/**
 * Issue 26 §3's formula steps over HTTP, against `gristlite serve` in its own process, as the issue
 * measured them beside real Grist (100k Items rows, 1,000 Customers). Each step's limit is the same
 * computation as raw SQLite statements on a plain copy of the data, measured in the same run (the
 * one-cell writes: the same PATCH to a table without formulas on the same server).
 */
import {join} from 'node:path';
import Database from 'better-sqlite3';
import {clientPool, latencies, makeRows, now, percentile, transactionMs, type Result} from './lib.js';
import {call, newDoc, result, startServer} from './scenarios.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const CUSTOMERS = Math.max(1, Math.min(1000, Math.floor(ROWS / 100)));
const RUNS = 3;

export async function formulaHttpScenarios(dir: string): Promise<Result[]> {
  const results: Result[] = [];
  const rows = makeRows(ROWS);
  const customerOf = (i: number) => (i % CUSTOMERS) + 1;

  // The limit: the same data in a plain SQLite file (WAL, committed as documents are).
  const raw = new Database(join(dir, 'fh-raw.sqlite'));
  raw.pragma('journal_mode = WAL');
  raw.exec('CREATE TABLE Customers (id INTEGER PRIMARY KEY, Name TEXT)');
  raw.exec('CREATE TABLE Items (id INTEGER PRIMARY KEY, Name TEXT, Qty INTEGER, Price NUMERIC, Customer INTEGER)');
  raw.transaction(() => {
    const c = raw.prepare('INSERT INTO Customers (id, Name) VALUES (?, ?)');
    for (let i = 1; i <= CUSTOMERS; i++) c.run(i, `customer-${i}`);
    const it = raw.prepare('INSERT INTO Items (id, Name, Qty, Price, Customer) VALUES (?, ?, ?, ?, ?)');
    rows.forEach((r, i) => it.run(i + 1, r.Name, r.Qty, r.Price, customerOf(i)));
  })();

  const server = await startServer(join(dir, 'fh-server'));
  const pool = clientPool(server.url, 4);
  const req = (method: string, path: string, body?: unknown) => call(pool, server.key, method, path, body);
  try {
    const docId = await newDoc(pool, server.key, 'formulas');
    const base = `/api/docs/${docId}/tables`;
    await req('POST', base, {
      tables: [
        {id: 'Customers', columns: [{id: 'Name', fields: {type: 'Text'}}]},
        {
          id: 'Items',
          columns: [
            {id: 'Name', fields: {type: 'Text'}},
            {id: 'Qty', fields: {type: 'Int'}},
            {id: 'Price', fields: {type: 'Numeric'}},
            {id: 'Customer', fields: {type: 'Ref:Customers'}},
          ],
        },
      ],
    });
    // The one-cell write's limit: the same PATCH to a table without formulas on the same server.
    await req('POST', base, {tables: [{id: 'Plain', columns: [{id: 'Qty', fields: {type: 'Int'}}]}]});
    await req('POST', `${base}/Plain/records`, {records: [{fields: {Qty: 0}}]});
    await req('POST', `${base}/Customers/records`, {
      records: Array.from({length: CUSTOMERS}, (_, i) => ({fields: {Name: `customer-${i + 1}`}})),
    });
    for (let i = 0; i < ROWS; i += 10_000) {
      const part = rows.slice(i, i + 10_000);
      await req('POST', `${base}/Items/records`, {
        records: part.map((r, j) => ({
          fields: {Name: r.Name, Qty: r.Qty, Price: r.Price, Customer: customerOf(i + j)},
        })),
      });
    }

    /** Median ms of adding formula column `Bench` to `table` over HTTP (removed again, untimed). */
    const addColumnMs = async (table: string, formula: string, type: string) => {
      const times: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        const t = now();
        await req('POST', `${base}/${table}/columns`, {
          columns: [{id: 'Bench', fields: {type, isFormula: true, formula}}],
        });
        times.push(now() - t);
        await req('DELETE', `${base}/${table}/columns/Bench`);
      }
      return percentile(times, 50);
    };

    // The document's first formula column loads its engine: reported, not judged.
    const t = now();
    await req('POST', `${base}/Items/columns`, {
      columns: [{id: 'Total', fields: {type: 'Numeric', isFormula: true, formula: '$Qty * $Price'}}],
    });
    const firstMs = now() - t;

    const steps: Array<{
      what: string;
      table: string;
      formula: string;
      type: string;
      sql: string[];
      undo: string[];
      max: number;
    }> = [
      {
        what: `add $Qty * $Price to ${ROWS} rows`,
        table: 'Items',
        formula: '$Qty * $Price',
        type: 'Numeric',
        sql: ['ALTER TABLE Items ADD COLUMN Bench NUMERIC DEFAULT 0', 'UPDATE Items SET Bench = Qty * Price'],
        undo: ['ALTER TABLE Items DROP COLUMN Bench'],
        max: 150,
      },
      {
        what: `add $Customer.Name to ${ROWS} rows`,
        table: 'Items',
        formula: '$Customer.Name',
        type: 'Text',
        sql: [
          "ALTER TABLE Items ADD COLUMN Bench TEXT DEFAULT ''",
          'UPDATE Items SET Bench = (SELECT Name FROM Customers c WHERE c.id = Items.Customer)',
        ],
        undo: ['ALTER TABLE Items DROP COLUMN Bench'],
        max: 120,
      },
      {
        what: `add SUM(Items.lookupRecords(Customer=$id).Total) to ${CUSTOMERS} customers`,
        table: 'Customers',
        formula: 'SUM(Items.lookupRecords(Customer=$id).Total)',
        type: 'Numeric',
        sql: [
          'CREATE INDEX fh_i ON Items (Customer)',
          'ALTER TABLE Customers ADD COLUMN Bench NUMERIC DEFAULT 0',
          'UPDATE Customers SET Bench = (SELECT SUM(Qty * Price) FROM Items i WHERE i.Customer = Customers.id)',
        ],
        undo: ['DROP INDEX fh_i', 'ALTER TABLE Customers DROP COLUMN Bench'],
        max: 40,
      },
    ];
    for (const s of steps) {
      const ms = await addColumnMs(s.table, s.formula, s.type);
      results.push(
        result({
          scenario: `FH. ${s.what}, over HTTP`,
          unit: 'ms',
          rate: ms,
          limit: transactionMs(raw, s.sql, s.undo, RUNS),
          p50Ms: ms,
          target: `<= ${s.max} ms`,
          maxMs: s.max + 1e-9,
          note: `limit: raw SQL, committed; the document's first formula column ${firstMs.toFixed(0)} ms`,
        }),
      );
    }

    // One-cell writes with dependents: a Qty (its Total, and the customer's Spent sum) and a
    // customer's Name read by ROWS/CUSTOMERS items through $Customer.Name.
    await req('POST', `${base}/Items/columns`, {
      columns: [{id: 'CustName', fields: {type: 'Text', isFormula: true, formula: '$Customer.Name'}}],
    });
    await req('POST', `${base}/Customers/columns`, {
      columns: [
        {
          id: 'Spent',
          fields: {type: 'Numeric', isFormula: true, formula: 'SUM(Items.lookupRecords(Customer=$id).Total)'},
        },
      ],
    });
    let n = 0;
    const plainMs = percentile(
      await latencies(200, () => req('PATCH', `${base}/Plain/records`, {records: [{id: 1, fields: {Qty: ++n}}]})),
      50,
    );
    const writes: Array<[string, number, () => Promise<unknown>]> = [
      [
        'one-cell PATCH with dependents (Total, the customer sum)',
        1.5,
        () => req('PATCH', `${base}/Items/records`, {records: [{id: 1 + (n % ROWS), fields: {Qty: ++n % 1000}}]}),
      ],
      [
        `rename a customer with ${Math.ceil(ROWS / CUSTOMERS)} dependents`,
        2,
        () => req('PATCH', `${base}/Customers/records`, {records: [{id: 1, fields: {Name: `c${++n}`}}]}),
      ],
    ];
    for (const [what, max, write] of writes) {
      const ms = percentile(await latencies(200, write), 50);
      results.push(
        result({
          scenario: `FH. ${what}, over HTTP`,
          unit: 'ms',
          rate: ms,
          limit: plainMs,
          p50Ms: ms,
          target: `<= ${max} ms`,
          maxMs: max + 1e-9,
          note: `limit: the same PATCH to a table without formulas (${plainMs.toFixed(2)} ms)`,
        }),
      );
    }
  } finally {
    await pool.close();
    server.proc.kill();
    raw.close();
  }
  return results;
}
