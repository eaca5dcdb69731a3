/**
 * Records of a document's tables in SQLite (DocStorage's part, storage.ts): values converted for a
 * column (parsed, lookups resolved, converted to its type), and records added, updated, removed
 * and replaced, with the guard, old-row hook, column classes, formula engine and change set told.
 */
import {BadRequest, engineError} from '../base/index.js';
import type {TextParser} from '@gristlite/formula';
import {StoredValues} from './colstats.js';
import {findMatches} from './lookup.js';
import type {ColumnMeta, TableMeta} from './meta.js';
import {guessColumn} from '@gristlite/formula';
import {pyStr} from '@gristlite/formula';
import {quoteIdent} from './query.js';
import {chunks, type RecordsSource, type WriteOptions} from './storage-source.js';
import {
  type CellValue,
  converterFor,
  convertsToNumeric,
  isRefListType,
  refTarget,
  type SqlValue,
  sqlDefaultFor,
} from './types.js';

const MAX_ROW_ID = 1000000;
/** Rows per multi-row INSERT, and the bound parameters one statement may take (SQLite: 32766). */
const INSERT_ROWS = 100;
const MAX_PARAMS = 32000;

export class StorageRecords {
  constructor(private readonly s: RecordsSource) {}

  // -------------------------------------------------------------------------------------------
  // Conversion

  /** JS-side parsing of strings for a column (Grist's ValueParser, in the type's module), or null when text stays text. */
  private parserOf(col: ColumnMeta): TextParser | null {
    return col.ct.parser(col.options, {
      settings: this.s.meta.settings,
      refLookup: (texts, raw, list) => this.refLookupOf(col, texts, raw, list),
    });
  }

  /** The `["l", value, {column, raw}]` lookup Grist's ReferenceParser makes of display values. */
  private refLookupOf(col: ColumnMeta, texts: string[], raw: string, list: boolean): CellValue {
    const visible = this.s.meta.colsByRef.get(Number(col.fields.visibleCol) || 0);
    const values: CellValue[] = [];
    const parse = visible ? this.parserOf(visible.col) : null;
    for (const t of texts) {
      if (!visible) {
        // Without a visible column, only integer-looking strings can be row ids.
        if (!/^\s*\d+\s*$/.test(t)) {
          return raw;
        }
        values.push(Number(t));
      } else {
        values.push(parse ? parse(t) : t);
      }
    }
    const column = visible ? visible.col.colId : 'id';
    return ['l', list ? ['L', ...values] : values[0], {column, raw}];
  }

  /**
   * Resolves the `["l", value, options]` lookups among `values` (in place) to row ids, or to
   * alt-text when a value is not found. The lookups into one column are matched together, in one
   * pass over its table; the first match (lowest row id) wins.
   */
  private resolveLookups(col: ColumnMeta, values: CellValue[]): void {
    const isList = col.ct.isList;
    const target = this.s.meta.tables.get(col.ct.target ?? '');
    const visible = this.s.meta.colsByRef.get(Number(col.fields.visibleCol) || 0);
    const byColumn = new Map<string, Array<{index: number; wanted: CellValue[]; altText: string}>>();
    values.forEach((v, index) => {
      if (!Array.isArray(v) || v[0] !== 'l') {
        return;
      }
      const options = (v[2] && typeof v[2] === 'object' && !Array.isArray(v[2]) ? v[2] : {}) as Record<
        string,
        CellValue
      >;
      const value = v[1] ?? null;
      const wanted = isList && Array.isArray(value) && value[0] === 'L' ? value.slice(1) : [value];
      const altText = typeof options.raw === 'string' ? options.raw : wanted.map((w) => pyStr(w)).join(', ');
      const colId =
        typeof options.column === 'string' && options.column ? options.column : (visible?.col.colId ?? 'id');
      if (!target || (colId !== 'id' && !target.byId.has(colId))) {
        values[index] = altText;
        return;
      }
      let lookups = byColumn.get(colId);
      if (!lookups) {
        lookups = [];
        byColumn.set(colId, lookups);
      }
      lookups.push({index, wanted, altText});
    });
    for (const [colId, lookups] of byColumn) {
      const matches = findMatches(
        this.s.db,
        target!,
        [colId],
        lookups.flatMap((l) => l.wanted.map((w) => [w])),
      );
      let k = 0;
      for (const {index, wanted, altText} of lookups) {
        const ids: Array<number | undefined> = wanted.map(() => matches[k++][0]);
        if (!ids.every((id): id is number => id !== undefined)) {
          values[index] = altText;
        } else {
          values[index] = isList ? ['L', ...ids] : ids[0];
        }
      }
    }
  }

  /** Parses (if asked), resolves lookups and converts values for one column. */
  convertColumnValues(col: ColumnMeta, values: CellValue[], opts: WriteOptions): CellValue[] {
    const convert = converterFor(col.type);
    const parse = opts.parse ? this.parserOf(col) : null;
    const out = new Array<CellValue>(values.length);
    let lookups = false;
    for (let i = 0; i < values.length; i++) {
      let v = values[i];
      if (v === undefined) {
        v = null;
      }
      if (parse && typeof v === 'string') {
        v = parse(v);
      }
      if (Array.isArray(v) && v[0] === 'l') {
        lookups = true;
      }
      out[i] = v;
    }
    if (lookups && col.ct.target !== null) {
      this.resolveLookups(col, out);
    }
    for (let i = 0; i < out.length; i++) {
      out[i] = convert(out[i]);
    }
    return out;
  }

  /**
   * `_ensure_column_accepts_data`: a real formula column refuses values; an empty column (formula
   * "") becomes a data column, its type guessed from the values when it is Any. Returns the values
   * to write, or null when the column must stay empty (every value blank).
   */
  private ensureAcceptsData(table: TableMeta, colId: string, values: CellValue[]): CellValue[] | null {
    const col = this.s.getColumn(table, colId);
    if (!col.isFormula || table.isMeta) {
      return values;
    }
    if (col.formula) {
      throw engineError('ValueError', `Can't save value to formula column ${colId}`);
    }
    // The column's conversion is the data engine's, not the caller's action (no structure check).
    return this.s.changeSet().engineMade(() => this.acceptData(table, col, colId, values));
  }

  private acceptData(table: TableMeta, col: ColumnMeta, colId: string, values: CellValue[]): CellValue[] | null {
    let out = values;
    if (col.type === 'Any') {
      const guess: Record<string, CellValue> = {};
      if (values.every((v) => v === null || typeof v === 'string')) {
        const g = guessColumn(values as Array<string | null>, this.s.meta.settings, this.s.meta.timezone);
        if (!g) {
          return null;
        }
        guess.type = g.type;
        if (g.widgetOptions) {
          guess.widgetOptions = JSON.stringify(g.widgetOptions);
        }
        out = g.values;
      } else {
        const nonBlank = values.filter((v) => v !== '' && v !== null);
        const numeric = nonBlank.filter(convertsToNumeric).length;
        guess.type = nonBlank.length && numeric >= nonBlank.length * 0.9 ? 'Numeric' : 'Text';
      }
      this.s.updateColumns(table, [{colId, values: guess}]);
    }
    this.s.updateColumns(this.s.getTable(table.tableId), [{colId, values: {isFormula: false}}]);
    // The rows that existed while the column was empty now hold the new type's default, as in
    // Grist (SPEC §19.11: B becomes [0, 0, 5]). The default is a constant of the type table.
    // This is part of the column's conversion, not a record change: no events are reported for it.
    const dflt = sqlDefaultFor(this.s.getColumn(this.s.getTable(table.tableId), colId).type);
    if (dflt !== 'NULL') {
      this.s.formulas?.beforeChange(table.tableId, null, [colId]);
      this.s.db
        .prepare(
          `UPDATE ${quoteIdent(table.tableId)} SET ${quoteIdent(colId)} = ${dflt} WHERE ${quoteIdent(colId)} IS NULL`,
        )
        .run();
      if (this.s.formulas) {
        const col = this.s.getColumn(this.s.getTable(table.tableId), colId);
        const rows = this.s.columnValues(this.s.getTable(table.tableId), col);
        this.s.formulas.updateRecords(
          table.tableId,
          rows.map(([id]) => id),
          {[colId]: rows.map(([, v]) => v)},
        );
      }
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // Writes

  private existingIds(tableId: string, ids: number[]): Set<number> {
    const found = new Set<number>();
    if (ids.length === 1) {
      // A one-row write (the most common): a lookup by rowid, a few µs cheaper than a json_each list.
      const hit = this.s
        .stmt(`SELECT id FROM ${quoteIdent(tableId)} WHERE id = ?`)
        .pluck()
        .get(ids[0]);
      if (hit !== undefined) found.add(hit as number);
      return found;
    }
    // One cached statement whatever the count (SQLite looks each id up by rowid): a statement
    // written for each count was prepared on every write, half the cost of a one-cell PATCH here.
    const stmt = this.s
      .stmt(`SELECT id FROM ${quoteIdent(tableId)} WHERE id IN (SELECT value FROM json_each(?))`)
      .pluck();
    for (const part of chunks([...new Set(ids)])) {
      for (const id of stmt.all(JSON.stringify(part)) as number[]) found.add(id);
    }
    return found;
  }

  /** Validates columns and prepares them for data: returns the table (reloaded) and kept columns. */
  private prepareColumns(
    table: TableMeta,
    colValues: Map<string, CellValue[]>,
  ): {table: TableMeta; cols: Map<string, CellValue[]>} {
    // Grist's engine gets the columns in sorted order (its marshaller sorts keys) and fails on the
    // first that is unknown, or a formula column given values.
    for (const colId of [...colValues.keys()].sort()) {
      const col = this.s.getColumn(table, colId);
      if (col.isFormula && col.formula && !table.isMeta) {
        throw engineError('ValueError', `Can't save value to formula column ${colId}`);
      }
    }
    const cols = new Map<string, CellValue[]>();
    for (const [colId, values] of colValues) {
      const accepted = this.ensureAcceptsData(table, colId, values);
      if (accepted) {
        cols.set(colId, accepted);
      }
      table = this.s.getTable(table.tableId);
    }
    return {table, cols};
  }

  addRecords(
    table: TableMeta,
    rowIds: Array<number | null>,
    colValues: Map<string, CellValue[]>,
    opts: WriteOptions,
  ): number[] {
    colValues.delete('id');
    const prepared = this.prepareColumns(table, colValues);
    table = prepared.table;
    let next = this.s.maxId(table.tableId) + 1;
    const ids = rowIds.map((id) => {
      const auto = id === null || id === undefined || (typeof id === 'number' && id < 0);
      const filled = auto ? next : id;
      if (typeof filled !== 'number' || !Number.isInteger(filled)) {
        throw engineError('TypeError', `Invalid row id ${JSON.stringify(id)}`);
      }
      // Grist reserves row id 0 for "no record" (an empty Ref cell holds 0).
      if (filled === 0) {
        throw engineError('ValueError', 'Row ID 0 is reserved for "no record"');
      }
      // Only ids the caller gives are bounded (useractions.py): a table grows past 1,000,000 rows.
      if (!auto && filled > MAX_ROW_ID) {
        throw engineError('ValueError', 'Row ID too high');
      }
      next = Math.max(next, filled) + 1;
      return filled;
    });
    const cols = [...prepared.cols.keys()];
    const converted = cols.map((c) => this.convertColumnValues(table.byId.get(c)!, prepared.cols.get(c)!, opts));
    if (table.hasManualSort && !prepared.cols.has('manualSort')) {
      cols.push('manualSort');
      converted.push(ids);
    }
    const encoders = cols.map((c) => table.byId.get(c)!.encode);
    const n = cols.length;
    // Several rows per INSERT statement: one call into SQLite per INSERT_ROWS rows is much faster
    // than one per row. The rest goes one row at a time.
    const perStmt = Math.max(1, Math.min(INSERT_ROWS, Math.floor(MAX_PARAMS / (n + 1))));
    const insertSql = (rowCount: number) => `INSERT INTO ${quoteIdent(table.tableId)}
      ("id"${cols.map((c) => ', ' + quoteIdent(c)).join('')})
      VALUES ${new Array(rowCount).fill(`(?${', ?'.repeat(n)})`).join(', ')}`;
    const many = ids.length >= perStmt ? this.s.stmt(insertSql(perStmt)) : null;
    const one = this.s.stmt(insertSql(1));
    this.s.formulas?.beforeChange(table.tableId, ids, null);
    const stored = cols.map((c) => new StoredValues(table.byId.get(c)!.declType));
    const tracked = this.s.classes.track(table.tableId);
    try {
      for (let start = 0; start < ids.length; ) {
        const rowCount = ids.length - start >= perStmt ? perStmt : 1;
        const params = new Array<SqlValue>(rowCount * (n + 1));
        let p = 0;
        for (let i = start; i < start + rowCount; i++) {
          params[p++] = ids[i];
          for (let j = 0; j < n; j++) {
            const v = encoders[j](converted[j][i]);
            params[p++] = v;
            stored[j].add(v);
          }
        }
        // Spread, not the array itself: better-sqlite3 binds separate arguments faster.
        (rowCount === 1 ? one : many!).run(...params);
        start += rowCount;
      }
    } catch (e) {
      if ((e as {code?: string}).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw engineError('ValueError', 'Row ID already exists');
      }
      throw e;
    }
    tracked.done(new Map(cols.map((c, j) => [c, stored[j]])), ids.length, ids[0]);
    this.s.guard?.added(table.tableId, ids, cols);
    this.s.afterInsert?.(table.tableId, ids, cols, converted);
    this.s.formulas?.addRecords(table.tableId, ids, Object.fromEntries(cols.map((c, j) => [c, converted[j]])));
    this.s.changeSet().add(table.tableId, ids);
    return ids;
  }

  updateRecords(table: TableMeta, rowIds: number[], colValues: Map<string, CellValue[]>, opts: WriteOptions): void {
    colValues.delete('id');
    // Grist's engine changes nothing and checks no row id when no column is given.
    if (colValues.size === 0) {
      return;
    }
    for (const colId of [...colValues.keys()].sort()) {
      this.s.getColumn(table, colId);
    }
    for (const id of rowIds as unknown[]) {
      if (typeof id !== 'number' || !Number.isInteger(id)) {
        throw new BadRequest(`Invalid row id ${JSON.stringify(id) ?? String(id)}`);
      }
    }
    const existing = this.existingIds(table.tableId, rowIds);
    const missing = rowIds.find((id) => !existing.has(id));
    if (missing !== undefined) {
      throw new BadRequest(`Invalid row id ${missing}`);
    }
    if (!rowIds.length || !colValues.size) {
      return;
    }
    const prepared = this.prepareColumns(table, colValues);
    table = prepared.table;
    const cols = [...prepared.cols.keys()];
    if (!cols.length) {
      return;
    }
    const converted = cols.map((c) => this.convertColumnValues(table.byId.get(c)!, prepared.cols.get(c)!, opts));
    const encoders = cols.map((c) => table.byId.get(c)!.encode);
    const stmt =
      this.s.stmt(`UPDATE ${quoteIdent(table.tableId)} SET ${cols.map((c) => `${quoteIdent(c)} = ?`).join(', ')}
      WHERE id = ?`);
    const params = new Array<SqlValue>(cols.length + 1);
    this.s.guard?.updating(table.tableId, rowIds, cols);
    this.s.beforeRows?.(table.tableId, rowIds, cols);
    this.s.formulas?.beforeChange(table.tableId, rowIds, cols);
    const n = cols.length;
    const stored = cols.map((c) => new StoredValues(table.byId.get(c)!.declType));
    const tracked = this.s.classes.track(table.tableId);
    // Many rows: the cells as bound, kept for the action history (D146).
    const hook = this.s.afterCells && rowIds.length > this.s.afterCells.minRows ? this.s.afterCells : null;
    const bound = hook ? cols.map(() => new Array<SqlValue>(rowIds.length)) : null;
    for (let i = 0; i < rowIds.length; i++) {
      for (let j = 0; j < n; j++) {
        const v = encoders[j](converted[j][i]);
        params[j] = v;
        stored[j].add(v);
        if (bound) bound[j][i] = v;
      }
      params[n] = rowIds[i];
      stmt.run(...params);
    }
    if (hook) cols.forEach((c, j) => hook.written(table.tableId, c, rowIds, bound![j]));
    tracked.done(new Map(cols.map((c, j) => [c, stored[j]])), rowIds.length);
    this.s.formulas?.updateRecords(table.tableId, rowIds, Object.fromEntries(cols.map((c, j) => [c, converted[j]])));
    this.s.changeSet().update(table.tableId, rowIds, cols);
  }

  removeRecords(table: TableMeta, rowIds: CellValue[]): void {
    for (const id of rowIds) {
      if (typeof id !== 'number' || !Number.isInteger(id)) {
        throw engineError('TypeError', `Invalid row id ${JSON.stringify(id)}`);
      }
    }
    const existing = [...this.existingIds(table.tableId, rowIds as number[])];
    if (!existing.length) {
      return;
    }
    this.s.guard?.removing(table.tableId, existing);
    this.s.beforeRows?.(table.tableId, existing);
    this.s.formulas?.beforeChange(table.tableId, existing, null);
    const tracked = this.s.classes.track(table.tableId);
    for (const part of chunks(existing)) {
      this.s
        .stmt(`DELETE FROM ${quoteIdent(table.tableId)} WHERE id IN (${part.map(() => '?').join(',')})`)
        .run(...part);
    }
    tracked.done(new Map(), existing.length); // Removing rows adds no storage class.
    this.s.formulas?.removeRecords(table.tableId, existing);
    this.s.changeSet().remove(table.tableId, existing);
    this.clearReferencesTo(table.tableId, existing);
  }

  /** Ref cells pointing at removed rows become 0; removed ids leave RefList cells. */
  clearReferencesTo(tableId: string, removed: number[]): void {
    const removedSet = new Set(removed);
    for (const t of this.s.meta.userTables) {
      for (const col of t.columns) {
        if (refTarget(col.type) !== tableId || (col.isFormula && col.formula)) {
          continue;
        }
        const c = quoteIdent(col.colId);
        const tq = quoteIdent(t.tableId);
        const updates: Array<[number, CellValue]> = [];
        for (const part of chunks(removed)) {
          const marks = part.map(() => '?').join(',');
          if (isRefListType(col.type)) {
            const rows = this.s.db
              .prepare(`SELECT t.id, t.${c} FROM ${tq} t WHERE typeof(t.${c}) = 'text'
              AND json_valid(t.${c}) AND EXISTS (SELECT 1 FROM json_each(t.${c}) j WHERE j.value IN (${marks}))`)
              .raw(true)
              .all(...part) as Array<[number, unknown]>;
            for (const [id, raw] of rows) {
              const v = col.decode(raw);
              const ids = Array.isArray(v) ? v.slice(1).filter((x) => !removedSet.has(x as number)) : [];
              updates.push([id, ids.length ? ['L', ...ids] : null]);
            }
          } else {
            const rows = this.s.db
              .prepare(`SELECT id FROM ${tq} WHERE +${c} IN (${marks})`)
              .raw(true)
              .all(...part) as Array<[number]>;
            for (const [id] of rows) {
              updates.push([id, 0]);
            }
          }
        }
        if (!updates.length) {
          continue;
        }
        this.s.beforeRows?.(
          t.tableId,
          updates.map(([id]) => id),
        );
        this.s.formulas?.beforeChange(
          t.tableId,
          updates.map(([id]) => id),
          [col.colId],
        );
        const stmt = this.s.stmt(`UPDATE ${tq} SET ${c} = ? WHERE id = ?`);
        const stored = new StoredValues(col.declType);
        const tracked = this.s.classes.track(t.tableId);
        for (const [id, v] of updates) {
          const encoded = col.encode(v);
          stored.add(encoded);
          stmt.run(encoded, id);
        }
        tracked.done(new Map([[col.colId, stored]]), updates.length);
        this.s.formulas?.updateRecords(
          t.tableId,
          updates.map(([id]) => id),
          {[col.colId]: updates.map(([, v]) => v)},
        );
        this.s.changeSet().update(
          t.tableId,
          updates.map(([id]) => id),
          [col.colId],
        );
      }
    }
  }

  /** ReplaceTableData: all rows replaced by the given ones. */
  replaceTableData(
    table: TableMeta,
    rowIds: Array<number | null>,
    colValues: Map<string, CellValue[]>,
    opts: WriteOptions,
  ): void {
    const all = (
      this.s.db
        .prepare(`SELECT id FROM ${quoteIdent(table.tableId)}`)
        .raw(true)
        .all() as Array<[number]>
    ).map(([id]) => id);
    if (all.length) {
      this.s.guard?.removing(table.tableId, all);
      this.s.beforeRows?.(table.tableId, all);
      this.s.formulas?.beforeChange(table.tableId, null, null);
      this.s.db.prepare(`DELETE FROM ${quoteIdent(table.tableId)}`).run();
      this.s.formulas?.removeRecords(table.tableId, all);
      this.s.changeSet().remove(table.tableId, all);
    }
    this.addRecords(table, rowIds, colValues, opts);
  }
}
