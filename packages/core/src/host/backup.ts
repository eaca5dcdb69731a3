import Database from 'better-sqlite3';

/**
 * Copies a SQLite file (a `.grist` document, the home database) with SQLite's online backup API:
 * consistent even while a server writes to it, whose writers are never blocked for long.
 */
export async function backupSqliteFile(src: string, dest: string): Promise<void> {
  const db = new Database(src, {readonly: true, fileMustExist: true});
  try {
    db.pragma('busy_timeout = 5000');
    await db.backup(dest);
  } finally {
    db.close();
  }
}
