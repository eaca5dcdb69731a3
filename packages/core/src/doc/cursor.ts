/**
 * Cursors of paginated reads (beyond Grist, issue 30): the position after the last row of a page
 * (the stored values of the columns that order it, `query.ts` sortColumns), sealed with AES-256-GCM
 * under a key the engine holds. Sealed rather than only signed (decision D55): a cursor then tells
 * nothing, not even the manualSort of a row the caller may see only part of, and any change to it,
 * or its use with another document, table, filter or sort (the additional data), fails to open.
 *
 * Format: base64url of a version byte, a 12-byte nonce, the ciphertext and the 16-byte tag.
 */
import {createCipheriv, createDecipheriv, randomBytes} from 'node:crypto';
import {BadRequest} from '../base/index.js';
import {decodePosition, encodePosition} from './read-json.js';

const VERSION = 1;
const NONCE = 12;
const TAG = 16;
/** Longest cursor accepted: a position holds at most one value a sort column (and URLs stay short of 64 KB). */
export const MAX_CURSOR_CHARS = 32 * 1024;

/** Seals positions into cursors and opens them again, under one 32-byte key (`Engine.cursors`). */
export class CursorCodec {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('a cursor key has 32 bytes');
  }

  /** The cursor of `position` for the query `binding` names. */
  seal(binding: string, position: Readonly<Record<string, unknown>>): string {
    const nonce = randomBytes(NONCE);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(binding));
    const body = Buffer.concat([cipher.update(encodePosition(position)), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), nonce, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The position `cursor` holds, or 400 `Invalid cursor` (forged, damaged, another query's, older format). */
  open(binding: string, cursor: string): Record<string, unknown> {
    const invalid = () => new BadRequest('Invalid cursor: follow the Link of the previous page with the same query');
    if (cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
    const raw = Buffer.from(cursor, 'base64url');
    // Only the canonical text of the bytes: base64url would ignore stray trailing characters.
    if (raw.length < 1 + NONCE + TAG || raw[0] !== VERSION || raw.toString('base64url') !== cursor) throw invalid();
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(1, 1 + NONCE));
      decipher.setAAD(Buffer.from(binding));
      decipher.setAuthTag(raw.subarray(raw.length - TAG));
      const text = Buffer.concat([decipher.update(raw.subarray(1 + NONCE, raw.length - TAG)), decipher.final()]);
      return decodePosition(text.toString('utf8'));
    } catch {
      throw invalid();
    }
  }
}

/** What a cursor is bound to: the document, the table and the query's filter and sort. */
export function cursorBinding(docId: string, tableId: string, filter: unknown, sort: unknown): string {
  const sortText = Array.isArray(sort) ? sort.join(',') : (sort ?? '');
  return JSON.stringify(['records', docId, tableId, filter ?? null, sortText]);
}
