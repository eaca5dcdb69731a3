/**
 * Streaming CSV / TSV / DSV export of one table (SPEC §6.2): a header row of labels (or colIds),
 * then every row in row-id order with values formatted for display. Rows are read with a
 * statement iterator on a separate read-only connection (one consistent snapshot, and the
 * document's own connection stays free for other requests), and written by csv-stringify in
 * batches, so memory stays bounded however many rows the table has.
 */
import Database from 'better-sqlite3';
import {stringify} from 'csv-stringify/sync';
import type {DocMeta} from '../doc/meta.js';
import {
  CENSORED,
  columnHeader,
  type ExportHeader,
  type ExportPlan,
  type ExportRestriction,
  planTableExport,
  exportRows,
  restrictPlan,
} from './plan.js';

/** A delimited format: `csv`, `tsv` or `dsv`. */
export type DsvFormat = 'csv' | 'tsv' | 'dsv';

/** The delimited formats Grist downloads: CSV, TSV and DSV, with their separator, extension and content type. */
export const DSV_FORMATS: Record<DsvFormat, {delimiter: string; contentType: string; extension: string}> = {
  csv: {delimiter: ',', contentType: 'text/csv; charset=utf-8', extension: '.csv'},
  tsv: {delimiter: '\t', contentType: 'text/tab-separated-values; charset=utf-8', extension: '.tsv'},
  dsv: {delimiter: '💩', contentType: 'text/x-doo-separated-values; charset=utf-8', extension: '.dsv'},
};

/** The document to read: its connection (for checks up front) and its file (for the stream). */
export interface ExportSource {
  db: Database.Database;
  path: string;
}

/** Options of a table export: the format and whether headers are labels or column ids. */
export interface DsvExportOptions {
  format?: DsvFormat;
  header?: ExportHeader;
  /** Approximate size of each chunk of output, in bytes (default 64 KiB). */
  chunkBytes?: number;
  /** Metadata already loaded from `source.db`, to skip loading it again for the checks. */
  meta?: DocMeta;
  /** What access rules let the user export (absent: everything). */
  restrict?: ExportRestriction;
}

/** A table export: its bytes as they are produced, with the extension and content type to send. */
export interface DsvExport {
  plan: ExportPlan;
  contentType: string;
  extension: string;
  /** The file's bytes; the read connection is opened on the first read and closed at the end. */
  body: AsyncIterable<Uint8Array>;
}

/**
 * Checks the table (404 `Table X not found.`) and returns its export as a lazy stream. Nothing is
 * opened until the body is read; a body read partly and abandoned closes its connection.
 */
export function exportTableDsv(source: ExportSource, tableId: string, opts: DsvExportOptions = {}): DsvExport {
  const format = DSV_FORMATS[opts.format ?? 'csv'];
  const plan = planTableExport(source.db, tableId, opts.meta);
  return {
    plan,
    contentType: format.contentType,
    extension: format.extension,
    body: dsvRows(
      source.path,
      tableId,
      format.delimiter,
      opts.header ?? 'label',
      opts.chunkBytes ?? 65536,
      opts.restrict,
    ),
  };
}

async function* dsvRows(
  path: string,
  tableId: string,
  delimiter: string,
  header: ExportHeader,
  chunkBytes: number,
  restrict?: ExportRestriction,
): AsyncGenerator<Uint8Array> {
  const db = new Database(path, {readonly: true, fileMustExist: true});
  try {
    db.pragma('trusted_schema = OFF');
    db.exec('BEGIN'); // One snapshot for the metadata and all the rows.
    const whole = planTableExport(db, tableId);
    const {plan, keep} = restrictPlan(whole, restrict);
    const cols = plan.columns;
    const n = cols.length;
    const options = {delimiter, eof: true};
    let batch: string[][] = [cols.map((c) => columnHeader(c, header))];
    let size = 0;
    for (const [row, censored] of exportRows(db, whole, restrict)) {
      const out = new Array<string>(n);
      for (let j = 0; j < n; j++) {
        const text = censored?.has(cols[j].colId) ? CENSORED : cols[j].format(row[keep[j] + 1]);
        out[j] = text;
        size += text.length + 1;
      }
      batch.push(out);
      if (size >= chunkBytes) {
        const chunk = Buffer.from(stringify(batch, options));
        batch = [];
        size = 0;
        yield chunk;
      }
    }
    if (batch.length) yield Buffer.from(stringify(batch, options));
  } finally {
    db.close();
  }
}

/** Reads a whole export into a string (tests and small tables). */
export async function exportTableDsvText(
  source: ExportSource,
  tableId: string,
  opts: DsvExportOptions = {},
): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of exportTableDsv(source, tableId, opts).body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** Grist's download file name: `<doc>-<table>` (just `<doc>` when they are equal), or `title`. */
export function exportFileBase(docName: string, tableId: string | null, title?: string | null): string {
  if (title) return title;
  const suffix = tableId ? (tableId === docName ? '' : `-${tableId}`) : '';
  return docName + suffix || 'document';
}
