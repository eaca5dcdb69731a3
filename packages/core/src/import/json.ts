/**
 * A JSON file as new tables, as Grist's import_json.py makes them (learned from its behaviour and
 * tests): the file's array (or one object) is the rows of a table named after the file, each
 * object's keys its columns; a nested object becomes a row of a table `<table>_<key>` and the cell a
 * reference to it; a nested array becomes rows of `<table>_<key>` that each refer back to the row
 * they came from; a value that is not an object is a row whose one column has no name. A column
 * takes its type from the first row that has it (numbers Numeric, booleans Bool, references Ref,
 * anything else Text). The file is parsed whole, within GRISTLITE_IMPORT_MAX_JSON_BYTES.
 */
import {readFileSync, statSync} from 'node:fs';
import type {GristDoc} from '../doc/gristdoc.js';
import {pickTableIdent} from '../doc/identifiers.js';
import type {CellValue} from '../doc/types.js';
import {BadRequest} from '../base/index.js';

interface Ref {
  ref: true;
  table: string;
  rowId: number;
}
interface JsonRow {
  values: Map<string, unknown>;
  parent: Ref | null;
}

const isRef = (v: unknown): v is Ref => typeof v === 'object' && v !== null && (v as Ref).ref === true;

/** The file's tables by name, in the order they were first met. */
function toTables(data: unknown, name: string): Map<string, JsonRow[]> {
  const tables = new Map<string, JsonRow[]>();
  const addRow = (table: string, value: unknown, parent: Ref | null): Ref => {
    let rows = tables.get(table);
    if (!rows) tables.set(table, (rows = []));
    const row: JsonRow = {values: new Map(), parent};
    rows.push(row);
    const me: Ref = {ref: true, table, rowId: rows.length};
    const obj =
      value !== null && typeof value === 'object' && !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : {'': value};
    for (const k of Object.keys(obj).sort()) {
      const v = obj[k];
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) row.values.set(k, addRow(`${table}_${k}`, v, null));
      else if (Array.isArray(v)) for (const item of v) addRow(`${table}_${k}`, item, me);
      else row.values.set(k, v);
    }
    return me;
  };
  for (const item of Array.isArray(data) ? data : [data]) addRow(name, item, null);
  return tables;
}

function gristType(v: unknown, ids: Map<string, string>): string {
  if (isRef(v)) return `Ref:${ids.get(v.table)}`;
  if (typeof v === 'number') return 'Numeric';
  if (typeof v === 'boolean') return 'Bool';
  return 'Text';
}

/** Reads a JSON file (400 beyond `maxBytes`, or when it does not parse). */
export function readJsonFile(path: string, maxBytes: number): unknown {
  const size = statSync(path).size;
  if (size > maxBytes) {
    throw new BadRequest(
      `The JSON file has ${size} bytes; at most ${maxBytes} are imported (GRISTLITE_IMPORT_MAX_JSON_BYTES)`,
    );
  }
  try {
    return JSON.parse(readFileSync(path, 'utf8').replace(/^\uFEFF/, ''));
  } catch (e) {
    throw new BadRequest(`Could not parse the JSON file: ${(e as Error).message}`);
  }
}

/**
 * Writes the tables of a JSON file into a new document (its starter table replaced), in one
 * transaction. Returns the table ids.
 */
export function writeJsonTables(doc: GristDoc, data: unknown, name: string): string[] {
  const tables = toTables(data, name);
  if (![...tables.values()].some((rows) => rows.length)) throw new BadRequest('No tables found');
  // Table ids first, so that references can name the tables they point to.
  const ids = new Map<string, string>();
  for (const t of tables.keys()) ids.set(t, pickTableIdent(t, [...ids.values()]));
  const written: string[] = [];
  doc.db.exec('BEGIN');
  try {
    doc.removeTable('Table1');
    for (const [t, rows] of tables) {
      // The value of each column in the first row that has it (its type), in Grist's column order.
      const first = new Map<string, unknown>();
      for (let i = rows.length - 1; i >= 0; i--) for (const [k, v] of rows[i].values) first.set(k, v);
      const columns = [...first].map(([k, v]) => ({
        key: k,
        type: gristType(v, ids),
        values: rows.map((r) => (r.values.has(k) ? r.values.get(k) : null)),
      }));
      const parent = rows.find((r) => r.parent)?.parent;
      if (parent) {
        let col = parent.table;
        for (let i = 2; first.has(col); i++) col = `${parent.table}${i}`;
        columns.push({key: col, type: `Ref:${ids.get(parent.table)}`, values: rows.map((r) => r.parent)});
      }
      const [{id: tableId}] = doc.addTables([
        {
          id: ids.get(t),
          columns: columns.map((c) => ({
            id: c.key || null,
            fields: {type: c.type, isFormula: false, ...(c.key ? {label: c.key} : {})},
          })),
        },
      ]);
      const colIds = doc.listColumns(tableId).map((c) => c.id);
      const data: Record<string, CellValue[]> = {};
      columns.forEach((c, k) => {
        data[colIds[k]] = c.values.map((v) =>
          isRef(v)
            ? v.rowId
            : v === undefined
              ? null
              : typeof v === 'object' && v !== null
                ? JSON.stringify(v)
                : (v as CellValue),
        );
      });
      if (rows.length) {
        if (columns.length) doc.addColumnar(tableId, data, {parse: false});
        else doc.addRecords(tableId, new Array(rows.length).fill({}), {parse: false});
      }
      written.push(tableId);
    }
    doc.db.exec('COMMIT');
    return written;
  } catch (e) {
    if (doc.db.inTransaction) doc.db.exec('ROLLBACK');
    throw e;
  }
}
