/**
 * Issue 42 §1: the cost of recording each write in the action history (D120). Each scenario runs
 * the same writes on two documents, one recording (the default) and one opened with
 * `history: {enabled: false}` (GRISTLITE_HISTORY=0), alternating between them so that both see the
 * same machine; the ratio is the rate with history over the rate without.
 */
import {createHash} from 'node:crypto';
import {join} from 'node:path';
import Database from 'better-sqlite3';
import {GristDoc} from '@gristlite/core/internal';
import {COLUMNS, latencies, makeRows, percentile, type Result} from './lib.js';
import {result} from './scenarios.js';

const TABLE = 'Items';
/** Rows in the table before the writes (a document of some size, as a user's is). */
const BASE_ROWS = Math.min(10_000, Number(process.env.BENCH_ROWS ?? 10_000));

function makeDoc(dir: string, name: string, history: boolean): GristDoc {
  const path = join(dir, `${name}.grist`);
  GristDoc.create(path).close();
  const doc = GristDoc.open(path, {history: {enabled: history}});
  doc.addTables([{id: TABLE, columns: COLUMNS}]);
  const rows = makeRows(BASE_ROWS);
  for (let i = 0; i < rows.length; i += 500) doc.addRecords(TABLE, rows.slice(i, i + 500));
  return doc;
}

/** Median ms of `write` on each document, measured in alternating rounds. */
async function paired(
  docs: {on: GristDoc; off: GristDoc},
  rounds: number,
  reps: number,
  write: (doc: GristDoc, i: number) => void,
): Promise<{on: number; off: number}> {
  const on: number[] = [];
  const off: number[] = [];
  let i = 0;
  for (let r = 0; r < rounds; r++) {
    off.push(...(await latencies(reps, () => write(docs.off, i++))));
    on.push(...(await latencies(reps, () => write(docs.on, i++))));
  }
  return {on: percentile(on, 50), off: percentile(off, 50)};
}

/**
 * The SQLite floor of recording a one-cell write, on a bare database with Grist's two history
 * tables: ms per transaction of the cell UPDATE alone, and with what recording adds at the least
 * (the row read before, a 400-byte body INSERTed with its unique hash, the branches moved).
 */
async function rawFloor(dir: string, rows: number): Promise<{bare: number; recorded: number}> {
  const db = new Database(join(dir, 'history-raw.sqlite'));
  db.pragma('journal_mode = WAL');
  db.exec(`CREATE TABLE T (id INTEGER PRIMARY KEY, Name TEXT, Qty INTEGER);
    CREATE TABLE _gristsys_ActionHistory (id INTEGER PRIMARY KEY, actionHash TEXT UNIQUE, parentRef INTEGER,
      actionNum INTEGER, body BLOB);
    CREATE TABLE _gristsys_ActionHistoryBranch (id INTEGER PRIMARY KEY, name TEXT UNIQUE, actionRef INTEGER);
    INSERT INTO _gristsys_ActionHistoryBranch (name) VALUES ('shared'), ('local_sent'), ('local_unsent');`);
  const ins = db.prepare('INSERT INTO T (Name, Qty) VALUES (?, ?)');
  db.transaction(() => {
    for (let i = 0; i < rows; i++) ins.run(`n${i}`, i);
  })();
  const upd = db.prepare('UPDATE T SET Name = ? WHERE id = ?');
  const sel = db.prepare('SELECT * FROM T WHERE id = ?');
  const hist = db.prepare(
    'INSERT INTO _gristsys_ActionHistory (actionHash, parentRef, actionNum, body) VALUES (?, ?, ?, ?)',
  );
  const tips = db.prepare(
    `UPDATE _gristsys_ActionHistoryBranch SET actionRef = ? WHERE name IN ('shared', 'local_sent', 'local_unsent')`,
  );
  const body = Buffer.alloc(400, 7);
  let n = 0;
  const write = (record: boolean) =>
    db.transaction(() => {
      const id = 1 + (n++ % rows);
      if (record) sel.get(id);
      upd.run(`x${n}`, id);
      if (record) {
        const hash = createHash('sha256').update(String(n)).digest('hex');
        tips.run(hist.run(hash, n, n, body).lastInsertRowid);
      }
    })();
  try {
    return await pairedRaw(write, 10, 200);
  } finally {
    db.close();
  }
}

/**
 * Median ms of a raw transaction, alone and recording, in alternating rounds: per transaction, as
 * H1 and H2 take the engine's (so both sides leave out the WAL checkpoints every few hundred pages).
 */
async function pairedRaw(
  write: (record: boolean) => void,
  rounds: number,
  reps: number,
): Promise<{bare: number; recorded: number}> {
  await latencies(reps, () => write(false));
  await latencies(reps, () => write(true));
  const bare: number[] = [];
  const recorded: number[] = [];
  for (let r = 0; r < rounds; r++) {
    bare.push(...(await latencies(reps, () => write(false))));
    recorded.push(...(await latencies(reps, () => write(true))));
  }
  return {bare: percentile(bare, 50), recorded: percentile(recorded, 50)};
}

/**
 * The SQLite floor of recording a 500-row add (H2f): ms per transaction of the same rows INSERTed
 * raw (100 a prepared statement, as the engine does) into a table of Items' schema, alone and with
 * what recording adds at the least: the bundle's bytes INSERTed with their unique hash, the hash of
 * the stored action (Grist's hash covers it: about half the body) and the branches moved.
 */
async function rawAddFloor(
  dir: string,
  baseRows: number,
  bodyBytes: number,
): Promise<{bare: number; recorded: number}> {
  const db = new Database(join(dir, 'history-raw-add.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`CREATE TABLE Items (id INTEGER PRIMARY KEY, manualSort NUMERIC DEFAULT 1e999, Name TEXT DEFAULT '',
      Qty INTEGER DEFAULT 0, Price NUMERIC DEFAULT 0, Active BOOLEAN DEFAULT 0, Day DATE DEFAULT NULL);
    CREATE TABLE _gristsys_ActionHistory (id INTEGER PRIMARY KEY, actionHash TEXT UNIQUE, parentRef INTEGER,
      actionNum INTEGER, body BLOB);
    CREATE TABLE _gristsys_ActionHistoryBranch (id INTEGER PRIMARY KEY, name TEXT UNIQUE, actionRef INTEGER);
    INSERT INTO _gristsys_ActionHistoryBranch (name) VALUES ('shared'), ('local_sent'), ('local_unsent');`);
  const PER = 100;
  const ins = db.prepare(
    `INSERT INTO Items (id, manualSort, Name, Qty, Price, Active, Day) VALUES ${new Array(PER).fill('(?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
  );
  const hist = db.prepare(
    'INSERT INTO _gristsys_ActionHistory (actionHash, parentRef, actionNum, body) VALUES (?, ?, ?, ?)',
  );
  const tips = db.prepare(
    `UPDATE _gristsys_ActionHistoryBranch SET actionRef = ? WHERE name IN ('shared', 'local_sent', 'local_unsent')`,
  );
  const body = Buffer.alloc(bodyBytes, 7);
  const stored = body.subarray(0, bodyBytes >> 1);
  let id = 0;
  let n = 0;
  const add = (rows: ReturnType<typeof makeRows>, record: boolean) =>
    db.transaction(() => {
      for (let k = 0; k < rows.length; k += PER) {
        const params: unknown[] = [];
        for (let j = k; j < k + PER; j++) {
          const r = rows[j];
          id++;
          params.push(id, id, r.Name, r.Qty, r.Price, r.Active ? 1 : 0, r.Day);
        }
        ins.run(...params);
      }
      if (record) {
        n++;
        const hash = createHash('sha256').update(String(n)).update(stored).digest('hex');
        tips.run(hist.run(hash, n, n, body).lastInsertRowid);
      }
    })();
  const base = makeRows(baseRows);
  for (let i = 0; i + 500 <= base.length; i += 500) add(base.slice(i, i + 500), false);
  const batch = makeRows(500, baseRows);
  try {
    return await pairedRaw((record) => add(batch, record), 5, 10);
  } finally {
    db.close();
  }
}

export async function historyScenarios(dir: string): Promise<Result[]> {
  const docs = {on: makeDoc(dir, 'history-on', true), off: makeDoc(dir, 'history-off', false)};
  const results: Result[] = [];
  try {
    // Warm both (JIT, statement caches).
    await paired(docs, 1, 50, (d, i) => d.updateRecords(TABLE, [{id: 1 + (i % 100), fields: {Qty: i}}]));
    const cell = await paired(docs, 10, 100, (d, i) =>
      d.updateRecords(TABLE, [{id: 1 + (i % BASE_ROWS), fields: {Name: `n${i}`}}]),
    );
    const floor = await rawFloor(dir, BASE_ROWS);
    results.push(
      result({
        scenario: `H1. one-cell write with history recorded (${BASE_ROWS}-row table), vs without`,
        unit: 'writes/s',
        rate: 1000 / cell.on,
        limit: 1000 / cell.off,
        p50Ms: cell.on,
        target: 'cost <= 1.15x (>= 0.87 of without)',
        ratioTarget: 1 / 1.15,
        note:
          `p50 ${cell.on.toFixed(3)} ms with, ${cell.off.toFixed(3)} ms without (GRISTLITE_HISTORY=0); ` +
          `bare SQLite ${floor.bare.toFixed(3)} ms, ${floor.recorded.toFixed(3)} ms with the history rows alone ` +
          `(${(floor.recorded / floor.bare).toFixed(1)}x)`,
      }),
    );
    // The limit no implementation of Grist's format removes: the write without history plus what
    // SQLite alone takes to write the same history rows (a body with its unique hash, the three
    // branch rows moved), which is itself about the bare UPDATE again (floor.recorded / floor.bare).
    const cellLimit = cell.off + (floor.recorded - floor.bare);
    results.push(
      result({
        scenario: 'H1f. the same one-cell write with history, vs without plus SQLite writing the history rows',
        unit: 'writes/s',
        rate: 1000 / cell.on,
        limit: 1000 / cellLimit,
        p50Ms: cell.on,
        target: '>= 0.87 of that limit (cost <= 1.15x)',
        ratioTarget: 1 / 1.15,
        note:
          `limit ${cellLimit.toFixed(3)} ms: without ${cell.off.toFixed(3)} ms + SQLite's history rows ` +
          `${(floor.recorded - floor.bare).toFixed(3)} ms (${(floor.recorded / floor.bare).toFixed(1)}x the bare UPDATE)`,
      }),
    );
    const batch = makeRows(500, BASE_ROWS);
    const add = await paired(docs, 5, 10, (d) => d.addRecords(TABLE, batch));
    results.push(
      result({
        scenario: 'H2. 500-row add with history recorded, vs without',
        unit: 'rows/s',
        rate: (500 * 1000) / add.on,
        limit: (500 * 1000) / add.off,
        p50Ms: add.on,
        target: 'cost <= 1.3x (>= 0.77 of without)',
        ratioTarget: 1 / 1.3,
        note: `p50 ${add.on.toFixed(2)} ms with, ${add.off.toFixed(2)} ms without`,
      }),
    );
    // As H1f: the bundle of a 500-row add is ~49 KB (the rows twice, as stored and as the user
    // action, Grist's format), which SQLite alone takes about as long to write as the rows.
    const bodyBytes = Number(
      docs.on.db.prepare('SELECT length(body) FROM _gristsys_ActionHistory ORDER BY id DESC LIMIT 1').pluck().get(),
    );
    const addFloor = await rawAddFloor(dir, BASE_ROWS, bodyBytes);
    const addLimit = add.off + (addFloor.recorded - addFloor.bare);
    results.push(
      result({
        scenario: 'H2f. the same 500-row add with history, vs without plus SQLite writing the history row',
        unit: 'rows/s',
        rate: (500 * 1000) / add.on,
        limit: (500 * 1000) / addLimit,
        p50Ms: add.on,
        target: '>= 0.77 of that limit (cost <= 1.3x)',
        ratioTarget: 1 / 1.3,
        note:
          `limit ${addLimit.toFixed(2)} ms: without ${add.off.toFixed(2)} ms + SQLite's ${(bodyBytes / 1024).toFixed(0)} KB ` +
          `history row ${(addFloor.recorded - addFloor.bare).toFixed(2)} ms (${(addFloor.recorded / addFloor.bare).toFixed(2)}x the bare INSERTs)`,
      }),
    );
  } finally {
    docs.on.close();
    docs.off.close();
  }
  return results;
}
