/**
 * How many documents a process can keep open under its file-descriptor limit (issue 24). Node has
 * no getrlimit: on Linux the soft limit is read from /proc/self/limits (Node has already raised it
 * to the hard limit at start); elsewhere it is unknown and the configured cap stands.
 */
import {readFileSync} from 'node:fs';

/** Descriptors kept free of documents: sockets, the SQL workers' pipes, the home database, uploads, logs. */
export const DESCRIPTOR_RESERVE = 128;

/**
 * Descriptors counted per open document: its database, WAL and shared-memory files (3), and one
 * more for what a request on it opens for a moment (an upload, an export, a backup copy).
 */
export const DESCRIPTORS_PER_DOC = 4;

/** The default cap of open documents (GRISTLITE_MAX_OPEN_DOCS unset). */
export const DEFAULT_MAX_OPEN_DOCS = 200;

/** This process's soft limit of open files, or null when unknown (not Linux, or unlimited). */
export function descriptorLimit(limitsFile = '/proc/self/limits'): number | null {
  try {
    const line = readFileSync(limitsFile, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line ? /^Max open files\s+(\S+)/.exec(line)?.[1] : undefined;
    const n = Number(soft);
    return Number.isInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

/**
 * The cap of open documents: the configured one (default 200), lowered so that documents use at
 * most `(limit - DESCRIPTOR_RESERVE) / DESCRIPTORS_PER_DOC` of the limit's descriptors; at least 1.
 */
export function maxOpenDocsFor(configured: number | undefined, limit: number | null): number {
  const cap = configured ?? DEFAULT_MAX_OPEN_DOCS;
  if (limit === null) return cap;
  return Math.max(1, Math.min(cap, Math.floor((limit - DESCRIPTOR_RESERVE) / DESCRIPTORS_PER_DOC)));
}
