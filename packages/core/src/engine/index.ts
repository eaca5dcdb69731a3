/**
 * The engine and its sessions: the open documents of a process (`Engine`, `OpenDocument`), the
 * checked API an embedder or the HTTP layer calls (`Session`, `SessionDoc`, typed tables and
 * transactions), and the operations that span documents (lifecycle, snapshots, forms).
 */
export * from './doc-lifecycle.js';
export * from './engine.js';
export * from './forms.js';
export * from './history-page.js';
export * from './lifecycle.js';
export * from './opendoc.js';
export * from './session-tables.js';
export * from './session-types.js';
export * from './session.js';
