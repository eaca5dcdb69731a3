/**
 * External attachment stores (Grist's `IAttachmentStore`): where a document's attachment files go
 * when its owner chose `external` (`documentSettings.attachmentStoreId`). `_gristsys_Files` then
 * keeps the row with `storageId` set and no bytes. Files are kept per document ("pool", the
 * document id, as Grist's pools of a document without forks), so that only that document reaches
 * them and deleting it removes them all. A directory store is here; the S3 one is in store-s3.
 */
import {randomBytes, randomUUID} from 'node:crypto';
import {linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync} from 'node:fs';
import {mkdir, open, readFile, rename, rm, stat} from 'node:fs/promises';
import {join} from 'node:path';
import {NotFound} from '../base/index.js';

/**
 * One external store. Every operation names the document (its pool) and the file identifier
 * (`sha1 + ext`, as `_gristsys_Files.ident`).
 */
export interface AttachmentStore {
  /**
   * Globally unique and stable (Grist: the installation's id and the label): what a document's
   * settings and `_gristsys_Files.storageId` record.
   */
  readonly id: string;
  /** The name `GET /attachments/stores` lists (`filesystem`, `s3`, `snapshots`). */
  readonly label: string;
  /** Whether the file is there. */
  exists(docId: string, fileIdent: string): Promise<boolean>;
  /** The file's bytes, or null when it is not there. */
  get(docId: string, fileIdent: string): Promise<Buffer | null>;
  /** Stores the file; once this resolves, `get` finds all of it. */
  put(docId: string, fileIdent: string, data: Buffer): Promise<void>;
  /** Removes the file (a missing one is fine). */
  delete(docId: string, fileIdent: string): Promise<void>;
  /** Removes every file of a document (it was deleted). */
  removePool(docId: string): Promise<void>;
  /** Frees connections. */
  close?(): void | Promise<void>;
}

const POOL_RE = /^[A-Za-z0-9_-]{1,100}$/;
/** Grist's identifiers start with the content's sha1; the rest is the extension. */
const IDENT_RE = /^[0-9a-f]{40}/;

/** A document id as a pool name: generated ids only (never a path). */
function checkPool(docId: string): void {
  if (!POOL_RE.test(docId)) throw new Error(`bad document id for an attachment store: ${docId}`);
}

/**
 * The name a file has in a store: an identifier read from a document (an imported file may hold
 * anything, an upload's extension any character) becomes a file or object name, so it must start
 * with a sha1 and its extension is percent-encoded (never `/`, never `.` or `..`, one name per
 * identifier). 404 `Invalid attachment identifier` for one a store cannot hold.
 */
export function storeFileName(docId: string, fileIdent: string): string {
  checkPool(docId);
  const name = IDENT_RE.test(fileIdent) ? fileIdent.slice(0, 40) + encodeURIComponent(fileIdent.slice(40)) : '';
  if (!name || name.length > 200) throw new NotFound('Invalid attachment identifier');
  return name;
}

/**
 * A directory on this machine (or a shared mount): `<root>/<docId>/<fileIdent>`. Files are written
 * aside, flushed and renamed into place, so a name never holds half a file.
 */
export class DirectoryAttachmentStore implements AttachmentStore {
  private constructor(
    readonly id: string,
    readonly label: string,
    readonly root: string,
  ) {}

  /**
   * Opens (creating) the store at `root`. Its id is made once and kept in the directory
   * (`.gristlite-store-id`), so every process and machine sharing the directory agrees on it.
   */
  static open(root: string, label = 'filesystem'): DirectoryAttachmentStore {
    mkdirSync(root, {recursive: true, mode: 0o700});
    const marker = join(root, '.gristlite-store-id');
    const tmp = `${marker}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(tmp, randomUUID(), {mode: 0o600});
    try {
      linkSync(tmp, marker); // the first process to get here names the store
    } catch (e) {
      if ((e as {code?: string}).code !== 'EEXIST') throw e;
    } finally {
      unlinkSync(tmp);
    }
    const uuid = readFileSync(marker, 'utf8').trim();
    return new DirectoryAttachmentStore(`${uuid}-${label}`, label, root);
  }

  private path(docId: string, fileIdent: string): string {
    return join(this.root, docId, storeFileName(docId, fileIdent));
  }

  async exists(docId: string, fileIdent: string): Promise<boolean> {
    try {
      return (await stat(this.path(docId, fileIdent))).isFile();
    } catch (e) {
      if ((e as {code?: string}).code === 'ENOENT') return false;
      throw e;
    }
  }

  async get(docId: string, fileIdent: string): Promise<Buffer | null> {
    try {
      return await readFile(this.path(docId, fileIdent));
    } catch (e) {
      if ((e as {code?: string}).code === 'ENOENT') return null;
      throw e;
    }
  }

  async put(docId: string, fileIdent: string, data: Buffer): Promise<void> {
    const dest = this.path(docId, fileIdent);
    await mkdir(join(this.root, docId), {recursive: true, mode: 0o700});
    const tmp = `${join(this.root, docId)}/.${randomBytes(8).toString('hex')}.tmp`;
    try {
      const fh = await open(tmp, 'wx', 0o600);
      try {
        await fh.writeFile(data);
        await fh.sync(); // the row naming the file commits next: the bytes must be on disk first
      } finally {
        await fh.close();
      }
      await rename(tmp, dest);
      // The rename itself is durable only once the directory is flushed.
      const dir = await open(join(this.root, docId), 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    } catch (e) {
      await rm(tmp, {force: true});
      throw e;
    }
  }

  async delete(docId: string, fileIdent: string): Promise<void> {
    await rm(this.path(docId, fileIdent), {force: true});
  }

  async removePool(docId: string): Promise<void> {
    checkPool(docId);
    await rm(join(this.root, docId), {recursive: true, force: true});
  }
}

/** The external stores a server has, and the one `POST /attachments/store {type: 'external'}` picks. */
export class AttachmentStores {
  private readonly byId = new Map<string, AttachmentStore>();
  /** The store `external` means (Grist's "standard" store), or null when there is none. */
  readonly standard: AttachmentStore | null;

  /**
   * @param stores every store documents may use (labels and ids unique)
   * @param standard the label of the one `external` picks; may be left out when there is one
   *   store, or one besides `snapshots` (the several-machine object store, as Grist's default)
   */
  constructor(
    readonly stores: readonly AttachmentStore[] = [],
    standard?: string,
  ) {
    const labels = new Set<string>();
    for (const s of stores) {
      if (labels.has(s.label) || this.byId.has(s.id)) throw new Error(`two attachment stores named ${s.label}`);
      labels.add(s.label);
      this.byId.set(s.id, s);
    }
    if (standard) {
      const found = stores.find((s) => s.label === standard);
      if (!found) {
        const known = stores.map((s) => s.label).join(', ') || 'none';
        throw new Error(`no attachment store named ${JSON.stringify(standard)} (configured: ${known})`);
      }
      this.standard = found;
    } else {
      const chosen = stores.length > 1 ? stores.filter((s) => s.label !== 'snapshots') : stores;
      if (chosen.length > 1) {
        throw new Error(
          `several attachment stores (${chosen.map((s) => s.label).join(', ')}): name the one "external" means`,
        );
      }
      this.standard = chosen[0] ?? null;
    }
  }

  /** The store with this id, or null when this server has none such. */
  get(id: string): AttachmentStore | null {
    return this.byId.get(id) ?? null;
  }

  /** Grist's `GET /attachments/stores` answer: the labels. */
  labels(): {label: string}[] {
    return this.stores.map((s) => ({label: s.label}));
  }

  /** Closes every store. */
  async close(): Promise<void> {
    for (const s of this.stores) await s.close?.();
  }
}
