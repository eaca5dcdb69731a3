// The whole document as JSON (issue 40 §5, D87), through the embedding API: one snapshot for every
// table, however long the reader takes; an answer of many pieces joins into one JSON document.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '../src/internal.js';

test('a write while the download is being read is not in it, in any table', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-json-'));
  const engine = await Engine.open({dataDir: dir});
  try {
    const ada = await engine.forUser('ada@example.com', 'Ada');
    const docId = await ada.createDoc((await ada.personalWorkspace()).id, {name: 'Snap'});
    const doc = await ada.doc(docId);
    await doc.addTables([
      {id: 'Big', columns: [{id: 'Text', fields: {type: 'Text'}}]},
      {id: 'Late', columns: [{id: 'N', fields: {type: 'Numeric'}}]},
    ]);
    await doc.addRecords(
      'Big',
      Array.from({length: 5000}, (_, i) => ({Text: `a line of text to fill the piece, number ${i}`})),
    );
    await doc.addRecords('Late', [{N: 1}]);

    const download = await doc.exportJson();
    assert.is(download.filename, 'Snap.json');
    const reader = download.body[Symbol.asyncIterator]();
    const pieces: Uint8Array[] = [];
    const first = await reader.next();
    assert.not.ok(first.done);
    pieces.push(first.value);
    // The first piece is out; the rest of Big and all of Late are still to be read.
    await doc.addRecords('Late', [{N: 2}]);
    await doc.updateRecords('Big', [{id: 5000, fields: {Text: 'changed'}}]);
    for (let r = await reader.next(); !r.done; r = await reader.next()) pieces.push(r.value);
    assert.ok(pieces.length > 2, `${pieces.length} pieces`);

    const body = JSON.parse(Buffer.concat(pieces).toString('utf8'));
    const [table1, big, late] = body.tables;
    assert.equal([table1.id, big.id, late.id], ['Table1', 'Big', 'Late']);
    assert.is(big.records.length, 5000);
    assert.is(big.records[4999].fields.Text, 'a line of text to fill the piece, number 4999');
    assert.equal(
      late.records.map((r: {fields: {N: number}}) => r.fields.N),
      [1],
    );
    // And a download started after the writes has them.
    const after = await doc.exportJson();
    const chunks: Uint8Array[] = [];
    for await (const c of after.body) chunks.push(c);
    assert.equal(
      JSON.parse(Buffer.concat(chunks).toString('utf8')).tables[2].records.map(
        (r: {fields: {N: number}}) => r.fields.N,
      ),
      [1, 2],
    );
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
