/**
 * GET .../attachments/archive: every attachment's bytes in one zip (stored, not deflated, as
 * Grist's) or tar file, streamed. zip-stream and tar-stream are the libraries Grist itself uses
 * (well kept: zip-stream underlies archiver). Entries are `<sha1>_<name without ext><ident ext>`,
 * the form Grist writes so that a re-upload recreates the same file identifiers.
 */
import {basename, extname} from 'node:path/posix';
import ZipStream from 'zip-stream';
import * as tar from 'tar-stream';
import type Database from 'better-sqlite3';

interface Entry {
  name: string;
  data: Buffer;
}

type Db = Database.Database;

/** Grist's attachmentToArchiveFilePath. */
export function archiveEntryName(fileIdent: string, fileName: string): string {
  const hash = fileIdent.split('.')[0];
  const nameExt = extname(fileName);
  return `${hash}_${basename(fileName, nameExt)}${extname(fileIdent)}`;
}

/**
 * Reads a file kept in an external store (`storageId`), or null when it is missing there: then
 * the archive stops (its stream errors), as Grist's does, rather than leaving the file out.
 */
export type ExternalFileReader = (fileIdent: string, storageId: string) => Promise<Buffer | null>;

/** One entry per distinct name, in attachment id order; one file's bytes in memory at a time. */
async function* entries(db: Db, readExternal?: ExternalFileReader): AsyncGenerator<Entry> {
  const rows = db.prepare('SELECT fileIdent, fileName FROM _grist_Attachments ORDER BY id').all() as {
    fileIdent: string;
    fileName: string;
  }[];
  const file = db.prepare('SELECT data, storageId FROM _gristsys_Files WHERE ident = ?');
  const seen = new Set<string>();
  for (const r of rows) {
    const name = archiveEntryName(String(r.fileIdent), String(r.fileName));
    if (seen.has(name)) continue;
    seen.add(name);
    const f = file.get(r.fileIdent) as {data: Buffer | null; storageId: string | null} | undefined;
    if (f?.storageId && readExternal) {
      const data = await readExternal(String(r.fileIdent), f.storageId);
      if (!data) throw new Error(`Attachment file '${r.fileIdent}' is missing from its store`);
      yield {name, data};
    } else {
      yield {name, data: f?.data ?? Buffer.alloc(0)};
    }
  }
}

/** The archive's bytes, produced as they are read (the next entry is added once the last is written). */
export async function* attachmentsArchive(
  db: Db,
  format: 'zip' | 'tar',
  readExternal?: ExternalFileReader,
): AsyncGenerator<Uint8Array> {
  const it = entries(db, readExternal);
  if (format === 'zip') {
    const zip = new ZipStream({store: true});
    const feed = (async () => {
      for await (const e of it) {
        await new Promise<void>((resolve, reject) =>
          zip.entry(e.data, {name: e.name}, (err) => (err ? reject(err) : resolve())),
        );
      }
      zip.finalize();
    })();
    feed.catch((err) => zip.destroy(err));
    for await (const chunk of zip) yield chunk as Uint8Array;
  } else {
    const pack = tar.pack();
    const feed = (async () => {
      for await (const e of it) {
        await new Promise<void>((resolve, reject) =>
          pack.entry({name: e.name, size: e.data.length}, e.data, (err) => (err ? reject(err) : resolve())),
        );
      }
      pack.finalize();
    })();
    feed.catch((err) => pack.destroy(err));
    for await (const chunk of pack) yield chunk as Uint8Array;
  }
}
