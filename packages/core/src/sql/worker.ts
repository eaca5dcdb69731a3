/**
 * A sandbox worker process, forked by SqlPool. It runs one statement at a time on read-only
 * connections; the parent enforces the deadline by killing this process, since a running
 * sqlite3_step cannot be interrupted through better-sqlite3.
 */
import type Database from 'better-sqlite3';
import {Worker} from 'node:worker_threads';
import {executeSelect, openReadOnly, userMessage} from './execute.js';
import type {FromWorker, ToWorker} from './protocol.js';

/** Connections kept open per worker, least recently used closed first. */
const MAX_OPEN_DOCS = 16;
const open = new Map<string, Database.Database>();

function connection(path: string): Database.Database {
  let db = open.get(path);
  if (db) {
    open.delete(path); // re-inserted below as the most recently used
  } else {
    db = openReadOnly(path);
    if (open.size >= MAX_OPEN_DOCS) {
      forget(open.keys().next().value!);
    }
  }
  open.set(path, db);
  return db;
}

function forget(path: string): void {
  open.get(path)?.close();
  open.delete(path);
}

function handle(msg: ToWorker): FromWorker {
  if (msg.type === 'forget') {
    forget(msg.path);
    return {type: 'forgotten', id: msg.id};
  }
  try {
    return {type: 'result', id: msg.id, json: executeSelect(connection(msg.path), msg.text, msg.args, msg.caps)};
  } catch (e) {
    const message = userMessage(e);
    return message === undefined
      ? {type: 'error', id: msg.id, message: String((e as Error)?.stack ?? e), userError: false}
      : {type: 'error', id: msg.id, message, userError: true};
  }
}

// The parent may exit without closing the pool (an embedder that never calls engine.close(), or a
// spare forking as the parent exits): then there is nobody to answer, and nothing to print (no
// ERR_IPC_CHANNEL_CLOSED or EPIPE trace).
const send = (msg: FromWorker) => {
  if (process.connected) process.send!(msg, undefined, {}, (err) => err && process.exit(0));
};
process.on('error', () => process.exit(0));
process.on('message', (msg: ToWorker) => send(handle(msg)));
process.on('disconnect', () => process.exit(0));
if (!process.connected) process.exit(0);

// The main thread may be stuck in a statement when the parent dies, and an orphan would then
// spin forever; this thread notices the re-parenting and ends the process. It boots on its own
// even while the main thread is busy, so readiness does not wait for it.
const watchdog = new Worker(
  `const {workerData: parent} = require('node:worker_threads');
   setInterval(() => { if (process.ppid !== parent) process.kill(process.pid, 'SIGKILL'); }, 500);`,
  {eval: true, workerData: process.ppid},
);
watchdog.unref();
send({type: 'ready'});
