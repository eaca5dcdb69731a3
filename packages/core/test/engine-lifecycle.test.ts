// An embedder's engine lifecycle (issue 23 §2): calls after close() fail with a clear error, and a
// process that exits without close() after running SQL prints nothing.
import {spawnSync} from 'node:child_process';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine, EngineClosed} from '../src/internal.js';

test('after engine.close(), every call fails with EngineClosed (503), not a closed-database TypeError', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-life-'));
  try {
    const engine = await Engine.open({dataDir: dir});
    const ada = await engine.forUser('ada@example.com', 'Ada');
    const home = await ada.personalWorkspace();
    const docId = await ada.createDoc(home.id, {name: 'X'});
    const doc = await ada.doc(docId);
    await doc.addTables([{id: 'Items', columns: [{id: 'Name', fields: {type: 'Text'}}]}]);
    await engine.close();
    assert.ok(engine.isClosed);
    const calls: Array<[string, () => unknown]> = [
      ['fetchRecords', () => doc.fetchRecords('Items')],
      ['addRecords', () => doc.addRecords('Items', [{Name: 'x'}])],
      ['runSql', () => doc.runSql('select 1')],
      ['doc', () => ada.doc(docId)],
      ['personalWorkspace', () => ada.personalWorkspace()],
      ['createOrg', () => ada.createOrg({name: 'Acme'})],
      ['forUser', () => engine.forUser('bob@example.com')],
      ['openDoc', () => engine.openDoc(docId)],
    ];
    for (const [name, call] of calls) {
      let err: unknown = null;
      try {
        await call();
      } catch (e) {
        err = e;
      }
      assert.instance(err, EngineClosed, name);
      assert.equal(
        [(err as EngineClosed).status, (err as Error).message],
        [503, 'The gristlite engine is closed'],
        name,
      );
    }
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
});

test('a process that exits without engine.close() after SQL prints nothing and exits 0', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-life-'));
  try {
    const index = pathToFileURL(fileURLToPath(new URL('../src/index.js', import.meta.url))).href;
    const script = join(dir, 'app.mjs');
    // The SQL pool forks its workers at the first query and keeps spares starting: exiting at once
    // leaves a worker whose parent is gone before it says it is ready.
    writeFileSync(
      script,
      `import {Engine} from ${JSON.stringify(index)};
       const engine = await Engine.open({dataDir: ${JSON.stringify(join(dir, 'data'))}});
       const ada = await engine.forUser('ada@example.com', 'Ada');
       const docId = await ada.createDoc((await ada.personalWorkspace()).id, {name: 'X'});
       const doc = await ada.doc(docId);
       // count(*) is not provably bounded (sql/bounded.ts): it goes to the pool, which forks.
       await doc.runSql('select count(*) from _grist_Tables');
       process.exit(0);`,
    );
    for (let run = 0; run < 3; run++) {
      const r = spawnSync(process.execPath, [script], {encoding: 'utf8', timeout: 60_000});
      assert.is(r.status, 0, r.stderr);
      // spawnSync waits until every holder of the stderr pipe is gone, orphaned workers included.
      assert.is(r.stderr.replace(/\(node:\d+\) Warning: The 'NO_COLOR'.*\n.*trace-warnings.*\n?/g, ''), '');
    }
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
