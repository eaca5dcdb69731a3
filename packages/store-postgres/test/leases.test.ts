import {spawn} from 'node:child_process';
import {fileURLToPath} from 'node:url';
import pg from 'pg';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {PgDocLeases} from '../src/index.js';
import {PG_URL, freshSchema, pgAvailable} from './pg-helpers.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function eventually(fn: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return true;
    await sleep(25);
  }
  return fn();
}

if (await pgAvailable('document leases')) {
  const t = suite('store-postgres: document leases');
  const open: PgDocLeases[] = [];
  const leases = async (holderId: string, schema: string, onLost?: (e: Error) => void) => {
    const l = await PgDocLeases.connect(PG_URL, {schema, holderId, onLost});
    open.push(l);
    return l;
  };
  t.after.each(async () => {
    for (const l of open.splice(0)) await l.close();
  });

  t(
    'two processes contend: one holds, the other is refused and sees the holder, then takes over on release',
    async () => {
      const schema = freshSchema('gl_lease');
      const p1 = await leases('http://p1:8484', schema);
      const p2 = await leases('http://p2:8484', schema);
      assert.is(await p1.holder('docA'), null);
      assert.is(await p1.acquire('docA'), true);
      assert.is(await p1.acquire('docA'), true, 'acquiring a held lease again is fine');
      assert.is(await p2.acquire('docA'), false);
      assert.is(await p2.holder('docA'), 'http://p1:8484');
      assert.is(await p1.holder('docA'), 'http://p1:8484');
      assert.is(await p2.acquire('docB'), true, 'other docs are independent');
      assert.is(await p1.acquire('docB'), false);
      assert.equal(p1.heldDocs(), ['docA']);

      await p1.release('docA');
      assert.is(await p2.holder('docA'), null, 'one release frees a lease acquired twice');
      assert.is(await p2.acquire('docA'), true);
      assert.is(await p1.acquire('docA'), false);
      assert.is(await p1.holder('docA'), 'http://p2:8484');
      await p1.release('docA'); // not held by p1: a no-op
      assert.is(await p1.acquire('docA'), false, 'releasing a lease one does not hold frees nothing');
    },
  );

  t('many concurrent acquires of one doc: exactly one process wins', async () => {
    const schema = freshSchema('gl_lease');
    const all = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => leases(`p${i}`, schema)));
    const got = await Promise.all(all.map((l) => l.acquire('hot')));
    assert.is(got.filter(Boolean).length, 1);
    const winner = all[got.indexOf(true)];
    assert.is(await all[0].holder('hot'), winner.holderId);
  });

  t('overlapping acquires in one process take the lock once, so one release frees it', async () => {
    const schema = freshSchema('gl_lease');
    const p1 = await leases('p1', schema);
    const p2 = await leases('p2', schema);
    assert.equal(await Promise.all([p1.acquire('d'), p1.acquire('d'), p1.acquire('d')]), [true, true, true]);
    await p1.release('d');
    assert.is(await p2.acquire('d'), true);
  });

  t('leases are per schema (deployment)', async () => {
    const a = await leases('a', freshSchema('gl_lease'));
    const b = await leases('b', freshSchema('gl_lease'));
    assert.is(await a.acquire('same-doc'), true);
    assert.is(await b.acquire('same-doc'), true);
  });

  t('close releases every lease', async () => {
    const schema = freshSchema('gl_lease');
    const p1 = await leases('p1', schema);
    const p2 = await leases('p2', schema);
    await p1.acquire('x');
    await p1.acquire('y');
    await p1.close();
    assert.is(await p2.acquire('x'), true);
    assert.is(await p2.acquire('y'), true);
  });

  t('a lost connection frees the leases at once and tells the process', async () => {
    const schema = freshSchema('gl_lease');
    let lost: Error | null = null;
    const p1 = await leases('p1', schema, (e) => (lost = e));
    const p2 = await leases('p2', schema);
    assert.is(await p1.acquire('doc'), true);
    const pid = await p1.backendPid();
    const admin = new pg.Client({connectionString: PG_URL});
    await admin.connect();
    try {
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await admin.end();
    }
    assert.ok(await eventually(() => p2.acquire('doc')), 'the other process gets the lease');
    assert.ok(await eventually(async () => lost !== null), 'onLost was called');
    assert.equal(p1.heldDocs(), []);
    try {
      await p1.acquire('doc');
      assert.unreachable('a process that lost its leases must not think it can take one');
    } catch (e) {
      assert.match((e as Error).message, /leases lost/);
    }
  });

  t('a killed process gives its leases up (SIGKILL, no cleanup)', async () => {
    const schema = freshSchema('gl_lease');
    const leasesJs = fileURLToPath(new URL('../src/leases.js', import.meta.url));
    const script = `
      const { PgDocLeases } = await import(${JSON.stringify(leasesJs)});
      const l = await PgDocLeases.connect(${JSON.stringify(PG_URL)}, { schema: ${JSON.stringify(schema)}, holderId: 'child' });
      console.log(await l.acquire('doc') ? 'held' : 'refused');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout.once('data', (d) => resolve(String(d).trim()));
        child.once('exit', (code) => reject(new Error(`child exited ${code}`)));
      });
      assert.is(line, 'held');
      const p2 = await leases('parent', schema);
      assert.is(await p2.acquire('doc'), false);
      assert.is(await p2.holder('doc'), 'child');
      child.kill('SIGKILL');
      assert.ok(await eventually(() => p2.acquire('doc')), 'the lease is free once the holder died');
      assert.is(await p2.holder('doc'), 'parent');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  t('holder ids must fit application_name', async () => {
    try {
      await PgDocLeases.connect(PG_URL, {holderId: 'x'.repeat(64)});
      assert.unreachable('should have refused');
    } catch (e) {
      assert.match((e as Error).message, /holderId/);
    }
  });

  t.run();
}
