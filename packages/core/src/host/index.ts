/**
 * What core needs from the machine it runs on: the file-descriptor limit that caps open documents,
 * the lock that keeps one serving process per data directory, and copies of SQLite files made
 * while they are being written.
 */
export * from './backup.js';
export * from './datadirlock.js';
export * from './fdlimit.js';
