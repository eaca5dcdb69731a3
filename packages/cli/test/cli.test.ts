// The command line: user add, org add and import, run as a user would run them.
import {execFileSync, spawnSync} from 'node:child_process';
import {copyFileSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {fileURLToPath} from 'node:url';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import Database from 'better-sqlite3';
import {Engine, createDocFile, hashApiKey} from '@gristlite/core/internal';
import {S3ObjectStore} from '@gristlite/store-s3';
import {attachmentStoresFromEnv, openEngine} from '../src/serve.js';
import {fixturePath, withFixtures} from '@gristlite/core/testing';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));

/** Runs the CLI and returns its exit status, stdout (trimmed) and stderr. */
function cliErr(dir: string, ...args: string[]): {status: number | null; stdout: string; stderr: string} {
  // No Node warnings (the test runner sets both FORCE_COLOR and NO_COLOR): stderr is what is tested.
  const env = {...process.env, GRISTLITE_DATA_DIR: dir, NODE_NO_WARNINGS: '1'};
  const r = spawnSync(process.execPath, [MAIN, ...args], {env, encoding: 'utf8'});
  return {status: r.status, stdout: r.stdout.trim(), stderr: r.stderr};
}

function cli(dir: string, ...args: string[]): string {
  return execFileSync(process.execPath, [MAIN, ...args], {
    env: {...process.env, GRISTLITE_DATA_DIR: dir},
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

test('user add prints only a key that authenticates the user; org add prints the new org id', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-cli-'));
  try {
    const key = cli(dir, 'user', 'add', 'Ada@Example.com', '--name', 'Ada');
    assert.match(key, /^[0-9a-f]{40}$/);
    const again = cli(dir, 'user', 'add', 'ada@example.com', '--key', 'k'.repeat(20));
    assert.is(again, 'k'.repeat(20));
    const printed = cli(dir, 'org', 'add', 'Acme', '--domain', 'acme', '--owner', 'ada@example.com');
    const orgId = Number(printed);
    assert.ok(Number.isInteger(orgId), `org add printed ${JSON.stringify(printed)}`);
    const engine = await Engine.open({dataDir: dir});
    try {
      const user = await engine.store.getUserByApiKeyHash(hashApiKey('k'.repeat(20)));
      assert.is(user?.email, 'Ada@Example.com');
      assert.is(user?.name, 'Ada');
      assert.is(await engine.store.getUserByApiKeyHash(hashApiKey(key)), null, 'the first key was replaced');
      assert.is((await engine.store.getOrgByDomain('acme'))?.id, orgId);
    } finally {
      await engine.close();
    }
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
});

withFixtures(test)('import creates documents from a .grist fixture and from a CSV file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-cli-'));
  try {
    cli(dir, 'user', 'add', 'you@example.com');
    copyFileSync(fixturePath('World.grist'), join(dir, 'World.grist'));
    const worldId = cli(dir, 'import', join(dir, 'World.grist'), '--name', 'World');
    writeFileSync(join(dir, 'items.csv'), 'name,qty\nbolts,4\nnuts,5\n');
    const csvId = cli(dir, 'import', join(dir, 'items.csv'));
    const engine = await Engine.open({dataDir: dir});
    try {
      assert.is((await engine.store.getDoc(worldId))?.name, 'World');
      const city = engine.openDoc(worldId).grist.fetchRecords('City', {limit: 1}).records[0];
      assert.is(city.fields.Name, 'Kabul');
      const items = engine.openDoc(csvId).grist.fetchRecords('Items').records;
      assert.equal(
        items.map((r) => [r.fields.name, r.fields.qty]),
        [
          ['bolts', 4],
          ['nuts', 5],
        ],
      );
    } finally {
      await engine.close();
    }
    assert.throws(() => cli(dir, 'import', join(dir, 'missing.grist')));
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
});

test('import shows one progress line for CSV and .grist files; a missing file is a one-line error', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-cli-'));
  try {
    cli(dir, 'user', 'add', 'you@example.com');
    const lines = ['n,label'];
    for (let i = 1; i <= 30000; i++) lines.push(`${i},row ${i}`);
    writeFileSync(join(dir, 'rows.csv'), lines.join('\n'));
    const csv = cliErr(dir, 'import', join(dir, 'rows.csv'));
    assert.is(csv.status, 0, csv.stderr);
    // Rewritten in place with \r, ended by one newline.
    assert.ok(/\rimporting rows\.csv: 30000 rows, 100%\n$/.test(csv.stderr), JSON.stringify(csv.stderr));
    assert.is(csv.stderr.split('\n').length, 2);
    createDocFile(join(dir, 'Empty.grist'));
    const grist = cliErr(dir, 'import', join(dir, 'Empty.grist'));
    assert.is(grist.status, 0, grist.stderr);
    // Each stage of a .grist import is shown (the copy, the schema upgrade, the formulas).
    for (const stage of ['copying', 'upgrading the schema', 'computing formulas']) {
      assert.ok(grist.stderr.includes(`\rimporting Empty.grist: ${stage}`), JSON.stringify(grist.stderr));
    }
    assert.match(grist.stderr, /\rimporting Empty\.grist: done\n$/);
    // A document gristlite can serve but not write (a newer schema) says so.
    createDocFile(join(dir, 'Newer.grist'));
    const newer = new Database(join(dir, 'Newer.grist'));
    newer.prepare('UPDATE _grist_DocInfo SET schemaVersion = 99').run();
    newer.close();
    const ro = cliErr(dir, 'import', join(dir, 'Newer.grist'));
    assert.is(ro.status, 0, ro.stderr);
    assert.match(
      ro.stderr,
      /\nwarning: Newer can be read but not written: Document has schema version 99, newer than gristlite's 46: it is served read-only\n$/,
    );
    const engine = await Engine.open({dataDir: dir});
    try {
      assert.is(engine.openDoc(csv.stdout).grist.fetchColumns('Rows').n.length, 30000);
      assert.equal(
        engine
          .openDoc(grist.stdout)
          .grist.listTables()
          .map((t) => t.id),
        ['Table1'],
      );
    } finally {
      await engine.close();
    }
    const missing = cliErr(dir, 'import', join(dir, 'missing.csv'));
    assert.is(missing.status, 1);
    assert.is(missing.stderr, `gristlite: no such file: ${join(dir, 'missing.csv')}\n`);
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
});

test('attachment stores from the settings: a directory, a bucket, the document bucket; which one "external" means', async () => {
  const s3 = {GRISTLITE_S3_ENDPOINT: 'http://127.0.0.1:9', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y'};
  assert.equal(attachmentStoresFromEnv({}), []);
  const docStore = new S3ObjectStore({bucket: 'docs', endpoint: 'http://127.0.0.1:9'});
  const fromEnv = attachmentStoresFromEnv({...s3, GRISTLITE_ATTACHMENT_STORE_S3: 's3://files/a'}, {
    store: docStore,
    prefix: 'prod/',
  } as never);
  assert.equal(
    fromEnv.map((s) => s.label),
    ['s3', 'snapshots'],
  );
  for (const s of fromEnv) await s.close?.();
  docStore.close();
  const dir = mkdtempSync(join(tmpdir(), 'gl-cli-att-'));
  try {
    const both = {
      ...s3,
      GRISTLITE_ATTACHMENT_STORE_S3: 's3://files/a',
      GRISTLITE_ATTACHMENT_STORE_DIR: join(dir, 'files'),
    };
    try {
      await openEngine(join(dir, 'data1'), both);
      assert.unreachable('opened with two stores and no choice');
    } catch (e) {
      assert.match((e as Error).message, /GRISTLITE_ATTACHMENT_STORE: several attachment stores \(filesystem, s3\)/);
    }
    const engine = await openEngine(join(dir, 'data2'), {...both, GRISTLITE_ATTACHMENT_STORE: 's3'});
    try {
      assert.equal(engine.attachmentStores.labels(), [{label: 'filesystem'}, {label: 's3'}]);
      assert.is(engine.attachmentStores.standard?.label, 's3');
    } finally {
      await engine.close();
    }
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
