/**
 * One serving process per data directory on the embedded SQLite home (issue 37 §6: a second
 * `serve` on the same folder started silently, and both served the same documents, each with its
 * own caches, webhook queues and settings). The lock is SQLite's own exclusive lock on a small
 * file in the directory, held for the process's lifetime: the operating system lets go of it
 * when the process dies, so a crash leaves nothing stale to clean up. Command-line tools
 * (`user add`, `backup`, ...) do not take it and keep working beside a server.
 */
import {join} from 'node:path';
import Database from 'better-sqlite3';

/** The lock's file in a data directory. */
export const DATA_DIR_LOCK = 'serving.lock';

/** Held until `release` (or the process's end). */
export interface DataDirLock {
  release(): void;
}

/**
 * Takes the data directory's lock, or throws a message that says what to do instead. The file
 * notes the holder's pid and start for a person looking at it afterwards.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const path = join(dataDir, DATA_DIR_LOCK);
  const db = new Database(path, {timeout: 0});
  try {
    // In exclusive locking mode SQLite keeps its lock after the first write until the connection
    // closes; no other connection, in this process or another, can read or write the file.
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER, since TEXT)');
    db.exec('DELETE FROM holder');
    db.prepare('INSERT INTO holder VALUES (?, ?)').run(process.pid, new Date().toISOString());
    db.exec('COMMIT');
  } catch (e) {
    db.close();
    if ((e as {code?: string}).code === 'SQLITE_BUSY') {
      throw new Error(
        `another gristlite process is serving the data directory ${dataDir} (it holds ${DATA_DIR_LOCK}): ` +
          'stop it first, or give each process its own data directory; to run several processes on ' +
          'one set of documents, use a PostgreSQL home (GRISTLITE_HOME_URL, docs/deployment.md)',
      );
    }
    throw e;
  }
  let held = true;
  return {
    release: () => {
      if (!held) return;
      held = false;
      db.close();
    },
  };
}
