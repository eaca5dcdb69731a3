/**
 * The values every cell module shares and nothing else: a cell in Grist's API encoding, a value as
 * SQLite stores it, and the document settings (locale, currency) cells are parsed and shown with.
 * A leaf, so the column types (coltypes/) and the helpers over them (types.ts, parse.ts) can all
 * import it without importing each other.
 */
/** A cell value in Grist's API encoding: primitives, or `[code, ...args]` arrays. */
export type CellValue = null | boolean | number | string | CellValue[] | {[key: string]: CellValue};
/**
 * `obj[key] = value` as an own property for any key: assigning `__proto__` would set the
 * object's prototype instead (a dict key from a formula or a stored `["O", {...}]` cell is data).
 */
export function setOwnKey<T>(obj: {[key: string]: T}, key: string, value: T): void {
  if (key === '__proto__')
    Object.defineProperty(obj, key, {value, enumerable: true, writable: true, configurable: true});
  else obj[key] = value;
}

/** A value as SQLite stores it through better-sqlite3. */
export type SqlValue = null | number | bigint | string | Buffer;

/** A document's locale and currency (`_grist_DocInfo.documentSettings`). */
export interface DocSettings {
  locale: string;
  currency?: string;
}
