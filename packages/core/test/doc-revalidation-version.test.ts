// The version HTTP revalidation tags answers with (D66, revalidate.ts): this connection's writes
// move it at once; another connection's commit from the next turn of the event loop (the file's
// versions are read once a turn, D154); `dataVersion()` still reads them every time.
import Database from 'better-sqlite3';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc} from '../src/doc/index.js';
import {tempPath} from './doc-helpers.js';

const nextTurn = () => new Promise((r) => setImmediate(r));

function docWithTable(): {doc: GristDoc; path: string} {
  const path = tempPath();
  const doc = GristDoc.create(path);
  doc.addTables([{id: 'T', columns: [{id: 'N', fields: {type: 'Numeric'}}]}]);
  return {doc, path};
}

test("the document's own writes move the version at once, within the same turn", async () => {
  const {doc} = docWithTable();
  try {
    await nextTurn();
    const v1 = doc.revalidationVersion();
    assert.is(doc.revalidationVersion(), v1, 'no write: the same version');
    doc.addRecords('T', [{N: 1}]);
    const v2 = doc.revalidationVersion();
    assert.is.not(v2, v1, 'an add');
    doc.updateRecords('T', [{id: 1, fields: {N: 2}}]);
    const v3 = doc.revalidationVersion();
    assert.is.not(v3, v2, 'an update');
    doc.removeRecords('T', [1]);
    assert.is.not(doc.revalidationVersion(), v3, 'a removal');
  } finally {
    doc.close();
  }
});

test("another connection's commit moves it from the next turn; dataVersion() at once", async () => {
  const {doc, path} = docWithTable();
  const other = new Database(path);
  try {
    await nextTurn();
    const v1 = doc.revalidationVersion();
    const d1 = doc.dataVersion();
    other.prepare('INSERT INTO T (N) VALUES (5)').run();
    assert.is.not(doc.dataVersion(), d1, 'dataVersion() reads the file each time');
    assert.is(doc.revalidationVersion(), v1, 'the same turn: the versions read earlier in it');
    await nextTurn();
    const v2 = doc.revalidationVersion();
    assert.is.not(v2, v1, 'the next turn: the commit shows');
    other.prepare('INSERT INTO T (N) VALUES (6)').run();
    await nextTurn();
    assert.is.not(doc.revalidationVersion(), v2, 'a later commit too');
  } finally {
    other.close();
    doc.close();
  }
});

test('the first read of a turn reads the file even when no write happened since the last', async () => {
  const {doc, path} = docWithTable();
  const other = new Database(path);
  try {
    // No read this turn yet: a commit before the first read shows in it.
    await nextTurn();
    const v1 = doc.revalidationVersion();
    await nextTurn();
    other.prepare('INSERT INTO T (N) VALUES (7)').run();
    assert.is.not(doc.revalidationVersion(), v1);
  } finally {
    other.close();
    doc.close();
  }
});

test.run();
