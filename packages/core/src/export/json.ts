/**
 * The whole document as one JSON document (`GET /download/json`, issue 40 §5, D87; grist-core
 * #2597 asks for it): every table a whole-document export includes (user tables, summaries left
 * out, as the XLSX download does), each with its columns as `GET /columns` describes them and its
 * records as `GET /records` writes them (`errors` beside `fields`, censored cells `["C"]`).
 * Read from one snapshot, so that tables agree with each other, and streamed in pieces of about
 * PIECE_CHARS characters: memory stays bounded whatever the document's size.
 */
import type Database from 'better-sqlite3';
import {loadMeta} from '../doc/meta.js';
import {openSnapshot} from '../doc/stream.js';
import {columnInfo} from '../doc/reads.js';
import type {CellValue} from '../doc/types.js';
import {type ExportRestriction, exportRows, planTableExport, restrictPlan} from './plan.js';

/** Characters gathered before a piece is handed on. */
const PIECE_CHARS = 64 * 1024;

const encoder = new TextEncoder();

/** The document's JSON as it is produced; an unknown table fails before the first byte. */
export function jsonDocumentStream(
  db: Database.Database,
  tableIds: string[],
  restrict: ReadonlyMap<string, ExportRestriction>,
  path: string,
): AsyncIterable<Uint8Array> {
  for (const t of tableIds) planTableExport(db, t); // 404 for a table gone since the listing
  return fromSnapshot(path, tableIds, restrict);
}

async function* fromSnapshot(
  path: string,
  tableIds: string[],
  restrict: ReadonlyMap<string, ExportRestriction>,
): AsyncGenerator<Uint8Array> {
  const db = openSnapshot(path);
  try {
    const meta = loadMeta(db);
    let piece = '{"tables":[';
    for (let t = 0; t < tableIds.length; t++) {
      const tableId = tableIds[t];
      const whole = planTableExport(db, tableId, meta);
      const r = restrict.get(tableId);
      const {plan, keep} = restrictPlan(whole, r);
      const table = meta.tables.get(tableId)!;
      const cols = plan.columns.map((c) => table.byId.get(c.colId)!);
      const columns = cols.map(columnInfo);
      piece += `${t ? ',' : ''}{"id":${JSON.stringify(tableId)},"columns":${JSON.stringify(columns)},"records":[`;
      let first = true;
      for (const [row, censored] of exportRows(db, whole, r)) {
        const fields: Record<string, CellValue> = {};
        let errors: Record<string, string> | undefined;
        for (let i = 0; i < cols.length; i++) {
          const col = cols[i];
          let v: CellValue = col.decode(row[keep[i] + 1]);
          if (censored?.has(col.colId)) v = ['C'];
          else if (Array.isArray(v) && v[0] === 'E') {
            (errors ??= {})[col.colId] = String(v[1]);
            v = null;
          }
          fields[col.colId] = v;
        }
        const record = errors ? {id: row[0], fields, errors} : {id: row[0], fields};
        piece += (first ? '' : ',') + JSON.stringify(record);
        first = false;
        if (piece.length >= PIECE_CHARS) {
          yield encoder.encode(piece);
          piece = '';
        }
      }
      piece += ']}';
    }
    yield encoder.encode(`${piece}]}`);
  } finally {
    db.close();
  }
}
