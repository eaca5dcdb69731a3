// Issue 37 §1, downloads: CSV and XLSX exports under row and column rules give exactly the rows
// and cells `GET /records` gives, chosen on the rows the export itself reads. The rows used to be
// picked on the document's connection when the download was asked for, then read later from a
// snapshot: a row whose owner changed in between went out with its new values, which the
// downloader may not read.
import {rmSync} from 'node:fs';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {KIWI, type RulesWorld, rulesWorld} from './rules-world.js';

async function text(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of body) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

/** The rows of a workbook's one sheet (header first), as text. */
async function sheet(bytes: Buffer): Promise<string[][]> {
  const ExcelJS = (await import('exceljs')).default;
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(bytes as unknown as ArrayBuffer);
  const out: string[][] = [];
  wb.worksheets[0].eachRow((row) => {
    out.push((row.values as unknown[]).slice(1).map((v) => String(v)));
  });
  return out;
}

function world(): Promise<RulesWorld> {
  return rulesWorld(
    Array.from({length: 12}, (_, k) => ({
      Owner: k % 3 === 0 ? KIWI : 'ada@example.com',
      Val: k + 1,
      Secret: `s${k + 1}`,
    })),
  );
}

test('CSV and XLSX exports hold the rows and cells GET /records gives, under both kinds of rules', async () => {
  const w = await world();
  try {
    for (const table of ['S', 'J']) {
      const records = await w.kiwi.fetchRecords(table);
      assert.equal(
        records.map((r) => r.id),
        [1, 4, 7, 10],
        `${table}: kiwi's rows`,
      );
      const cell = (v: unknown) => (Array.isArray(v) && v[0] === 'C' ? 'CENSORED' : String(v));
      const expected = records.map((r) =>
        ['Owner', 'Val', 'Secret'].filter((c) => c in r.fields).map((c) => cell(r.fields[c])),
      );
      const header = table === 'S' ? ['Owner', 'Val'] : ['Owner', 'Val', 'Secret'];
      const csv = (await text((await w.kiwi.exportTable(table)).body)).toString('utf8').trim().split(/\r?\n/);
      assert.equal(
        csv.map((l) => l.split(',')),
        [header, ...expected],
        `${table} CSV`,
      );
      assert.equal(await sheet(await text((await w.kiwi.exportXlsx({tableId: table})).body)), [header, ...expected]);
    }
    // J's Secret is censored where Val > 6: the check ran on each row.
    assert.equal(
      (await w.kiwi.fetchRecords('J')).map((r) => r.fields.Secret),
      ['s1', 's4', ['C'], ['C']],
    );
  } finally {
    await w.engine.close();
    rmSync(w.dir, {recursive: true, force: true});
  }
});

test('a row that changes hands between the download and its reading follows what is read', async () => {
  const w = await world();
  try {
    for (const table of ['S', 'J']) {
      const csv = await w.kiwi.exportTable(table);
      const xlsx = await w.kiwi.exportXlsx({tableId: table});
      // Before a byte is read: row 1 leaves kiwi with a new secret value, row 2 becomes hers.
      await w.ada.updateRecords(table, [
        {id: 1, fields: {Owner: 'ada@example.com', Val: 100}},
        {id: 2, fields: {Owner: KIWI, Val: 2}},
      ]);
      const lines = (await text(csv.body)).toString('utf8').trim().split(/\r?\n/);
      assert.equal(
        lines.slice(1).map((l) => l.split(',')[1]),
        ['2', '4', '7', '10'],
        `${table} CSV`,
      );
      assert.not.ok(lines.join().includes('100'), `${table}: row 1's new value`);
      const rows = await sheet(await text(xlsx.body));
      assert.equal(
        rows.slice(1).map((r) => r[1]),
        ['2', '4', '7', '10'],
        `${table} XLSX`,
      );
      await w.ada.updateRecords(table, [
        {id: 1, fields: {Owner: KIWI, Val: 1}},
        {id: 2, fields: {Owner: 'ada@example.com', Val: 2}},
      ]);
    }
  } finally {
    await w.engine.close();
    rmSync(w.dir, {recursive: true, force: true});
  }
});

test.run();
