/**
 * Schema operations of a document, as the REST API's table and column endpoints make them: add,
 * rename and remove tables; add, update, replace and remove columns. Each is one write of the
 * document (`GristDoc` runs it in its transaction, with its access checks and recalculation).
 */
import {BadRequest, NotFound} from '../base/index.js';
import type {ColumnSpec, TableSpec} from './api-types.js';
import {requireSameFields} from './bodies.js';
import {checkColumnCount, checkInput, refuseDuplicateIds} from './input.js';
import type {TableMeta} from './meta.js';
import type {ColInfo, DocStorage} from './storage.js';
import {type CellValue, converterFor} from './types.js';

/** What schema operations need of their document. */
export interface SchemaSource {
  readonly storage: DocStorage;
  table(tableId: string): TableMeta;
  userTable(tableId: string): TableMeta;
  /** Runs `fn` as one write of the document. */
  write<T>(fn: () => T): T;
}

/** Column fields accepted at creation by POST /tables (AddTable ignores the others). */
const ADD_TABLE_FIELDS = ['type', 'isFormula', 'formula', 'label', 'widgetOptions'];
/** Column fields accepted at creation by POST /columns (AddVisibleColumn). */
const ADD_COLUMN_FIELDS = [
  'type',
  'isFormula',
  'formula',
  'label',
  'widgetOptions',
  'rules',
  'recalcWhen',
  'recalcDeps',
  'visibleCol',
  '_position',
];

function pick(obj: Record<string, CellValue> | undefined, keys: string[]): ColInfo {
  const out: ColInfo = {};
  for (const k of keys) {
    if (obj && obj[k] !== undefined) {
      out[k] = obj[k];
    }
  }
  return out;
}

export class DocSchema {
  constructor(private readonly src: SchemaSource) {}

  /** POST /tables: one AddTable per entry, all in one transaction. */
  addTables(tables: TableSpec[]): Array<{id: string}> {
    checkInput(tables, 'tables');
    return this.src.write(() =>
      tables.map((t) => {
        const cols = t.columns.map((c) => ({id: c.id, ...pick(c.fields, ADD_TABLE_FIELDS)}));
        return {id: this.src.storage.addTable(t.id, cols).table_id};
      }),
    );
  }

  /** PATCH /tables: updates of `_grist_Tables` records by tableId (in practice, renames). */
  updateTables(tables: Array<{id: string; fields: Record<string, CellValue>}>): void {
    checkInput(tables, 'tables');
    requireSameFields(tables);
    for (const t of tables) {
      const table = this.src.storage.meta.tables.get(t.id);
      if (!table || table.isMeta) {
        throw new NotFound(`Table not found "${t.id}"`);
      }
    }
    this.src.write(() => {
      for (const t of tables) {
        this.updateTableRecord(this.src.table(t.id).tableRef, t.fields);
      }
    });
  }

  /** Fields of a `_grist_Tables` row (a rename renames the table), inside the current write. */
  updateTableRecord(tableRef: number, fields: Record<string, CellValue>): void {
    const table = this.src.storage.meta.byRef.get(tableRef);
    if (!table) {
      throw new BadRequest(`Invalid row id ${tableRef}`);
    }
    const {tableId, ...rest} = fields;
    if (tableId !== undefined && tableId !== table.tableId) {
      this.src.storage.renameTable(table, String(tableId));
    }
    const meta = this.src.table('_grist_Tables');
    for (const k of Object.keys(rest)) {
      this.src.storage.getColumn(meta, k);
    }
    if (Object.keys(rest).length) {
      const converted: Record<string, CellValue> = {};
      for (const [k, v] of Object.entries(rest)) {
        converted[k] = converterFor(meta.byId.get(k)!.type)(v);
      }
      this.src.storage.metaUpdate('_grist_Tables', tableRef, converted);
      if ('summarySourceTable' in converted) {
        this.src.storage.formulasStale = true;
      }
      this.src.storage.reloadMeta();
    }
  }

  /** Removes a table, its views and its summary tables. */
  removeTable(tableId: string): void {
    const table = this.src.table(tableId);
    if (table.isMeta) {
      throw new BadRequest(`Cannot remove metadata table ${tableId}`);
    }
    this.src.write(() => this.src.storage.removeTables([table.tableRef]));
  }

  /** POST /columns: AddVisibleColumn per entry. */
  addColumns(tableId: string, columns: ColumnSpec[]): Array<{id: string}> {
    checkInput(columns, 'columns');
    checkColumnCount(columns.length);
    this.src.userTable(tableId);
    return this.src.write(() =>
      columns.map((c) => {
        const info = pick(c.fields, ADD_COLUMN_FIELDS);
        return {id: this.src.storage.addColumn(this.src.table(tableId), c.id, info, {visible: true}).colId};
      }),
    );
  }

  /** PATCH /columns: one update of `_grist_Tables_column` records (all columns checked first). */
  updateColumns(tableId: string, columns: Array<{id: string; fields: Record<string, CellValue>}>): void {
    checkInput(columns, 'columns');
    requireSameFields(columns);
    refuseDuplicateIds(columns);
    const table = this.src.userTable(tableId);
    for (const c of columns) {
      if (!table.byId.has(c.id)) {
        throw new NotFound(`Column not found "${c.id}"`);
      }
    }
    this.src.write(() =>
      this.src.storage.updateColumns(
        table,
        columns.map((c) => ({colId: c.id, values: c.fields})),
      ),
    );
  }

  /** PUT /columns: updates, then adds, then (with replaceall) removal of the unlisted columns. */
  replaceColumns(
    tableId: string,
    columns: Array<{id: string; fields?: Record<string, CellValue>}>,
    options: {noadd?: boolean; noupdate?: boolean; replaceall?: boolean} = {},
  ): void {
    checkInput(columns, 'columns');
    refuseDuplicateIds(columns);
    const table = this.src.userTable(tableId);
    const listed = new Set<number>();
    const updates: Array<{colId: string; values: Record<string, CellValue>}> = [];
    const adds: ColumnSpec[] = [];
    for (const c of columns) {
      const existing = table.byId.get(c.id);
      if (existing) {
        listed.add(existing.colRef);
        if (!options.noupdate) {
          updates.push({colId: c.id, values: c.fields ?? {}});
        }
      } else if (!options.noadd) {
        adds.push({id: c.id, fields: c.fields});
      }
    }
    checkColumnCount(adds.length);
    const removals = options.replaceall
      ? table.columns.filter((c) => !c.hidden && !listed.has(c.colRef)).map((c) => c.colRef)
      : [];
    this.src.write(() => {
      // One update of all listed columns, as Grist's BulkUpdateRecord (one at a time, 1000 took 99 s).
      if (updates.length) {
        this.src.storage.updateColumns(this.src.table(tableId), updates);
      }
      for (const a of adds) {
        this.src.storage.addColumn(this.src.table(tableId), a.id, pick(a.fields, ADD_COLUMN_FIELDS), {visible: true});
      }
      if (removals.length) {
        this.src.storage.removeColumns(removals);
      }
    });
  }

  /** Removes a column, as `DELETE /columns/{colId}`. */
  removeColumn(tableId: string, colId: string): void {
    const table = this.src.storage.meta.tables.get(tableId);
    const col = table && !table.isMeta ? table.byId.get(colId) : undefined;
    if (!col) {
      throw new NotFound(`Table or column not found "${tableId}.${colId}"`);
    }
    this.src.write(() => this.src.storage.removeColumns([col.colRef]));
  }
}
