import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteHomeStore } from '../src/home/sqlite.js';
import { homeStoreConformance } from '../src/testing/index.js';

homeStoreConformance('SqliteHomeStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gristlite-home-'));
  return {
    store: new SqliteHomeStore(join(dir, 'home.sqlite3')),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});
