// The shared HomeStore conformance suite (@gristlite/conformance/homestore) against the SQLite store.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {homeStoreConformance} from '@gristlite/conformance/homestore';
import {SqliteHomeStore} from '../src/home/sqlite.js';

homeStoreConformance('SqliteHomeStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gristlite-home-'));
  return {
    store: new SqliteHomeStore(join(dir, 'home.sqlite3')),
    cleanup: async () => rmSync(dir, {recursive: true, force: true}),
  };
});
