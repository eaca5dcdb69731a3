// What the engine answers when a document's file is missing or is not a Grist document.
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {BadRequest, Engine, NotFound} from '../src/internal.js';

async function withDoc(
  fn: (engine: Engine, docId: string, p: ReturnType<Engine['home']['principalFor']>) => Promise<void>,
) {
  const dir = mkdtempSync(join(tmpdir(), 'gl-files-'));
  const engine = await Engine.open({dataDir: dir});
  try {
    const user = await engine.home.ensureUser('ada@example.com', 'Ada');
    const p = engine.home.principalFor(user, true);
    const [home] = await engine.store.listWorkspaces((await engine.store.getPersonalOrg(user.id))!.id);
    await fn(engine, await engine.createDoc(home.id, p, {name: 'D'}), p);
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
}

test('a home record whose file is gone answers 404, for the access check and for opening', () =>
  withDoc(async (engine, docId, p) => {
    rmSync(engine.docPath(docId));
    assert.throws(
      () => engine.openDoc(docId),
      (e: unknown) => e instanceof NotFound && e.message === 'Document file not found',
    );
    // A non-owner's request: the home check passes (access rules are read where the document is
    // open), then opening answers the same 404.
    const kiwi = engine.home.principalFor(await engine.home.ensureUser('kiwi@example.com', 'Kiwi'), true);
    await engine.home.updateAccess('doc', {doc: docId}, p, null, {delta: {users: {'kiwi@example.com': 'viewers'}}});
    const session = engine.as(kiwi);
    const err = await (await session.doc(docId)).fetchRecords('Table1').catch((e) => e);
    assert.instance(err, NotFound);
  }));

test('a file that is not a Grist document answers 400 and leaves nothing open', () =>
  withDoc(async (engine, docId) => {
    writeFileSync(engine.docPath(docId), 'this is not a database, not even close'.repeat(40));
    assert.throws(
      () => engine.openDoc(docId),
      (e: unknown) => e instanceof BadRequest && /not a valid Grist document/.test(e.message),
    );
    assert.throws(
      () => engine.openDoc(docId),
      (e: unknown) => e instanceof BadRequest,
      'a second attempt fails the same way (nothing half-open cached)',
    );
  }));

test.run();
