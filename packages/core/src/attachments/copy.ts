/**
 * A document file that becomes another document (a copy, a replacement, an import): its files in
 * external stores are kept per document, so they are copied into the new document's pool, and a
 * chosen store this server does not have is replaced by its standard one (Grist's
 * `updateDocumentAttachmentStoreSettingToValidValue`, which it applies to imports).
 */
import Database from 'better-sqlite3';
import type {AttachmentStores} from './external.js';
import {readDocSettings, storeFailed} from './files.js';

/**
 * Prepares the document file at `path` (not open elsewhere) to be document `docId`: each file its
 * rows keep in a store this server has is copied there from document `fromDocId`'s pool (when
 * given: a copy made here; a file missing there stays missing), and its chosen store is made valid.
 */
export async function carryAttachmentFiles(
  path: string,
  stores: AttachmentStores,
  docId: string,
  fromDocId: string | null,
): Promise<void> {
  const db = new Database(path, {fileMustExist: true});
  try {
    const hasStorage = db.prepare(`SELECT 1 FROM pragma_table_info('_gristsys_Files') WHERE name = 'storageId'`).get();
    if (hasStorage && fromDocId && stores.stores.length) {
      const files = db
        .prepare(`SELECT ident, storageId FROM _gristsys_Files WHERE storageId IS NOT NULL AND storageId != ''`)
        .all() as {ident: string; storageId: string}[];
      for (const f of files) {
        const store = stores.get(f.storageId);
        // A store that fails fails the copy (503), rather than make one whose files are gone.
        const data = store ? await store.get(fromDocId, f.ident).catch(storeFailed) : null;
        if (store && data) await store.put(docId, f.ident, data).catch(storeFailed);
      }
    }
    const hasSettings = db
      .prepare(`SELECT 1 FROM pragma_table_info('_grist_DocInfo') WHERE name = 'documentSettings'`)
      .get();
    if (!hasSettings) return;
    const settings = readDocSettings(db);
    const chosen = settings.attachmentStoreId;
    if (typeof chosen !== 'string' || !chosen || stores.get(chosen)) return;
    if (stores.standard) settings.attachmentStoreId = stores.standard.id;
    else delete settings.attachmentStoreId;
    db.prepare('UPDATE _grist_DocInfo SET documentSettings = ? WHERE id = 1').run(JSON.stringify(settings));
  } finally {
    db.close();
  }
}
