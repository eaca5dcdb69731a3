/**
 * The record writes of a document: add, update and remove records (row and column forms), and
 * add-or-update, as the REST API's record endpoints and the user actions make them. Each public
 * call is one write of the document (`GristDoc` runs it in its transaction, with the metadata
 * write rules of the caller's role, access checks and recalculation).
 */
import type Database from 'better-sqlite3';
import {BadRequest, engineError, shownValue} from '../base/index.js';
import type {UpsertOptions, UpsertRecord, UpsertResult, WriteAs} from './api-types.js';
import {requireSameFields} from './bodies.js';
import type {DocGuard} from './guard.js';
import {checkInput} from './input.js';
import type {TableMeta} from './meta.js';
import {checkMetaWrite, type WriterRole} from './metarules.js';
import type {DocStorage, WriteOptions} from './storage.js';
import {type CellValue, converterFor, refTarget} from './types.js';
import {bulkAddOrUpdate, type UpsertTarget} from './upsert.js';
import {removeViewSections} from './summary-actions.js';
import {removeViews} from './views.js';

/** What record writes need of their document. */
export interface RecordSource {
  readonly storage: DocStorage;
  readonly db: Database.Database;
  /** The role of the current write's caller (metadata write rules). */
  readonly writer: WriterRole;
  /** The access rules of the current call, or null. */
  readonly guard: DocGuard | null;
  table(tableId: string): TableMeta;
  /** Runs `fn` as one write of the document, for a caller of this role. */
  write<T>(fn: () => T, role?: WriterRole): T;
  /** A `_grist_Tables` row's fields changed (schemaops.ts). */
  updateTableRecord(tableRef: number, fields: Record<string, CellValue>): void;
}

export class DocRecordWrites {
  constructor(readonly src: RecordSource) {}

  // -------------------------------------------------------------------------------------------
  // Writing records

  opts(o: Partial<WriteOptions> | undefined): WriteOptions {
    return {parse: o?.parse ?? true};
  }

  /** POST /records: one BulkAddRecord over the union of the records' keys (missing ones null). */
  addRecords(tableId: string, records: Array<Record<string, CellValue>>, options?: WriteAs): number[] {
    checkInput(records, 'records');
    const colValues = toColumns(records);
    return this.src.write(
      () => this.bulkAdd(tableId, new Array(records.length).fill(null), colValues, this.opts(options)),
      options?.role,
    );
  }

  /** POST /data: `{colId: [values...]}`, the row count being the first column's length. */
  addColumnar(tableId: string, data: Record<string, CellValue[]>, options?: WriteAs): number[] {
    checkInput(data);
    const keys = Object.keys(data);
    if (!keys.length) {
      throw new BadRequest('Invalid payload: at least one column is required');
    }
    const count = columnArray(data, keys[0]).length;
    // Grist's engine zips each column with the row ids: a short column leaves its type's default.
    const table = this.src.table(tableId);
    const colValues = new Map(
      keys
        .filter((k) => k !== 'id')
        .map((k) => [k, padTo(columnArray(data, k), count, cellDefaultFor(table.byId.get(k)?.type))]),
    );
    return this.src.write(
      () => this.bulkAdd(tableId, new Array(count).fill(null), colValues, this.opts(options)),
      options?.role,
    );
  }

  /**
   * PATCH /records: one BulkUpdateRecord, so every record must name the same fields (400
   * otherwise, as Grist answers), checked here so that no caller can null the cells a record left out.
   */
  updateRecords(
    tableId: string,
    records: Array<{id: number; fields: Record<string, CellValue>}>,
    options?: WriteAs,
  ): void {
    checkInput(records, 'records');
    requireSameFields(records);
    const colValues = toColumns(records.map((r) => r.fields));
    this.src.write(
      () =>
        this.bulkUpdate(
          tableId,
          records.map((r) => r.id),
          colValues,
          this.opts(options),
        ),
      options?.role,
    );
  }

  /** PATCH /data: `{id: [...], colId: [...]}`. */
  updateColumnar(tableId: string, data: Record<string, CellValue[]>, options?: WriteAs): void {
    checkInput(data);
    const ids = columnArray(data, 'id') as number[];
    const colValues = new Map(
      Object.keys(data)
        .filter((k) => k !== 'id')
        .map((k) => [k, padTo(columnArray(data, k), ids.length)]),
    );
    this.src.write(() => this.bulkUpdate(tableId, ids, colValues, this.opts(options)), options?.role);
  }

  /** POST /records/delete, /data/delete: missing ids are ignored. */
  removeRecords(tableId: string, ids: unknown[], options?: WriteAs): void {
    checkInput(ids, 'row ids');
    this.src.write(() => this.bulkRemove(tableId, ids as CellValue[]), options?.role);
  }

  bulkAdd(
    tableId: string,
    rowIds: Array<number | null>,
    colValues: Map<string, CellValue[]>,
    opts: WriteOptions,
  ): number[] {
    const table = this.src.table(tableId);
    if (table.isMeta) {
      checkMetaWrite(tableId, 'add', colValues.keys(), this.src.writer);
      if (tableId === '_grist_Tables' || tableId === '_grist_Tables_column') {
        throw new BadRequest(`Adding records to ${tableId} is not supported; use AddTable or AddColumn`);
      }
      for (const k of colValues.keys()) {
        this.src.storage.getColumn(table, k);
      }
      const rows = rowIds.map((_, i) => {
        const row: Record<string, CellValue> = {};
        for (const [k, vals] of colValues) {
          row[k] = converterFor(table.byId.get(k)!.type)(vals[i]);
        }
        return row;
      });
      // Grist's engine places rows added without a position after every existing one
      // (PositionColumn.prepare_new_values from its default, infinity): rulePos, pagePos, ...
      for (const c of table.columns) {
        if (c.type !== 'PositionNumber' || colValues.has(c.colId)) continue;
        const next = this.src.storage.nextPos(tableId, c.colId);
        rows.forEach((row, i) => (row[c.colId] = next + i));
      }
      return this.src.storage.metaAdd(tableId, rows);
    }
    return this.src.storage.addRecords(table, rowIds, colValues, opts);
  }

  bulkUpdate(tableId: string, rowIds: number[], colValues: Map<string, CellValue[]>, opts: WriteOptions): void {
    const table = this.src.table(tableId);
    if (!table.isMeta) {
      this.src.storage.updateRecords(table, rowIds, colValues, opts);
      return;
    }
    checkMetaWrite(tableId, 'update', colValues.keys(), this.src.writer);
    for (const k of colValues.keys()) {
      if (k !== 'id') {
        this.src.storage.getColumn(table, k);
      }
    }
    const rows = new Map(this.src.storage.metaRows(tableId).map((r) => [Number(r.id), r]));
    const missing = rowIds.find((id) => !rows.has(id));
    if (missing !== undefined) {
      throw new BadRequest(`Invalid row id ${shownValue(missing)}`);
    }
    rowIds.forEach((id, i) => {
      const values: Record<string, CellValue> = {};
      for (const [k, vals] of colValues) {
        if (k !== 'id') {
          values[k] = vals[i];
        }
      }
      if (tableId === '_grist_Tables') {
        this.src.updateTableRecord(id, values);
      } else if (tableId === '_grist_Tables_column') {
        const found = this.src.storage.meta.colsByRef.get(id);
        if (found) {
          this.src.storage.updateColumns(found.table, [{colId: found.col.colId, values}]);
        }
      } else {
        const converted: Record<string, CellValue> = {};
        for (const [k, v] of Object.entries(values)) {
          converted[k] = converterFor(table.byId.get(k)!.type)(v);
        }
        this.src.storage.metaUpdate(tableId, id, converted);
      }
    });
  }

  bulkRemove(tableId: string, rowIds: CellValue[]): void {
    const table = this.src.table(tableId);
    if (!table.isMeta) {
      this.src.storage.removeRecords(table, rowIds);
      return;
    }
    checkMetaWrite(tableId, 'remove', [], this.src.writer);
    if (rowIds.some((id) => typeof id !== 'number' || !Number.isInteger(id))) {
      throw engineError('TypeError', 'row ids must be integers');
    }
    const existing = new Set(this.src.storage.metaRows(tableId).map((r) => Number(r.id)));
    const ids = (rowIds as number[]).filter((id) => existing.has(id));
    switch (tableId) {
      case '_grist_Tables':
        this.src.storage.removeTables(ids);
        break;
      case '_grist_Tables_column':
        this.src.storage.removeColumns(ids);
        break;
      case '_grist_Views':
        removeViews(this.src.storage, ids);
        break;
      case '_grist_Views_section':
        removeViewSections(this.src.storage, ids);
        break;
      default:
        this.src.storage.metaRemove(tableId, ids);
        // Attachments cells refer to _grist_Attachments rows.
        this.src.storage.clearReferencesTo(tableId, ids);
        this.clearMetaReferencesTo(tableId, ids);
    }
  }

  /**
   * Grist's engine sets metadata Ref cells pointing at removed rows to 0 (useractions.py
   * `_BulkRemoveRecord`, "remove any references to this row"): a rule whose resource was removed
   * then names resource 0.
   */
  private clearMetaReferencesTo(tableId: string, ids: number[]): void {
    if (!ids.length) return;
    const removed = new Set(ids);
    for (const t of this.src.storage.meta.tables.values()) {
      if (!t.isMeta) continue;
      for (const c of t.columns) {
        if (refTarget(c.type) !== tableId || !c.type.startsWith('Ref:')) continue;
        for (const row of this.src.storage.metaRows(t.tableId)) {
          if (removed.has(Number(row[c.colId]))) this.src.storage.metaUpdate(t.tableId, Number(row.id), {[c.colId]: 0});
        }
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Add-or-update

  /**
   * PUT /records. Records are grouped by their sorted `require` keys and sorted `fields` keys; the
   * groups run in order of first appearance (Grist's lodash groupBy + Object.values), each as one
   * BulkAddOrUpdateRecord, all in one transaction (a later group sees what an earlier one did).
   */
  upsertRecords(tableId: string, records: UpsertRecord[], options: UpsertOptions = {}): UpsertResult {
    checkInput(records, 'records');
    // Matching `require` reads the table: under rules, only for those who read all of it (Grist).
    this.src.guard?.requireWholeRead(tableId);
    const groups = new Map<string, number[]>();
    records.forEach((r, i) => {
      const key = `${Object.keys(r.require).sort().join(',')}:${Object.keys(r.fields ?? {})
        .sort()
        .join(',')}`;
      let g = groups.get(key);
      if (!g) {
        g = [];
        groups.set(key, g);
      }
      g.push(i);
    });
    const result: UpsertResult = {recordIds: [], addRecordIds: [], updateRecordIds: []};
    this.src.write(() => {
      for (const indexes of groups.values()) {
        const outcome = this.bulkAddOrUpdate(
          tableId,
          indexes.map((i) => records[i]),
          options,
        );
        outcome.recordIds.forEach((ids, j) => {
          if (ids) {
            result.recordIds[indexes[j]] = ids;
          }
        });
        // Loops, not push(...): a spread of a data-sized array overflows the stack.
        for (const id of outcome.added) {
          result.addRecordIds.push(id);
        }
        for (const ids of outcome.updated) {
          result.updateRecordIds.push(ids);
        }
      }
    }, options.role);
    return result;
  }

  bulkAddOrUpdate(
    tableId: string,
    records: UpsertRecord[],
    options: UpsertOptions,
  ): {recordIds: Array<number[] | undefined>; added: number[]; updated: number[][]} {
    return bulkAddOrUpdate(this.upsertTarget, tableId, records, options);
  }

  /** What add-or-update uses (upsert.ts), bound to this document. */
  private readonly upsertTarget: UpsertTarget = ((w: DocRecordWrites): UpsertTarget => ({
    get storage() {
      return w.src.storage;
    },
    get db() {
      return w.src.db;
    },
    table: (t) => w.src.table(t),
    opts: (o) => w.opts(o),
  }))(this);
}

/** Records to columns over the union of their keys; a record missing a key gets null. */
function toColumns(records: Array<Record<string, CellValue>>): Map<string, CellValue[]> {
  const colValues = new Map<string, CellValue[]>();
  const n = records.length;
  for (let i = 0; i < n; i++) {
    const rec = records[i];
    for (const k in rec) {
      let arr = colValues.get(k);
      if (!arr) {
        arr = new Array<CellValue>(n).fill(null);
        colValues.set(k, arr);
      }
      arr[i] = rec[k];
    }
  }
  return colValues;
}

function columnArray(data: Record<string, CellValue[]>, key: string): CellValue[] {
  const v = data[key];
  if (!Array.isArray(v)) {
    throw new BadRequest(`Invalid payload: "${key}" must be an array`);
  }
  return v;
}

/** The value a new cell of a Grist type holds when none is given (Grist's column defaults). */
function cellDefaultFor(type: string | undefined): CellValue {
  const base = (type ?? 'Any').split(':')[0];
  if (base === 'Bool') {
    return false;
  }
  if (base === 'Int' || base === 'Numeric' || base === 'Ref') {
    return 0;
  }
  if (base === 'Text' || base === 'Choice') {
    return '';
  }
  return null;
}

function padTo(values: CellValue[], n: number, fill: CellValue = null): CellValue[] {
  if (values.length === n) {
    return values;
  }
  const out = values.slice(0, n);
  while (out.length < n) {
    out.push(fill);
  }
  return out;
}
