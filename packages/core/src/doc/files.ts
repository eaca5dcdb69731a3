/** A SQLite file on disk is the file and its companions (WAL, shared memory, rollback journal). */
import {rmSync} from 'node:fs';

const COMPANIONS = ['-wal', '-shm', '-journal'];

/** Deletes a SQLite database file and its companions (missing ones are fine). */
export function removeSqliteFiles(path: string): void {
  for (const suffix of ['', ...COMPANIONS]) rmSync(path + suffix, {force: true});
}

/** Deletes only the companions: the file stays, as its last checkpoint left it. */
export function removeSqliteCompanions(path: string): void {
  for (const suffix of COMPANIONS) rmSync(path + suffix, {force: true});
}
