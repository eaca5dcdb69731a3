/**
 * Columns of a document's tables (DocStorage's part, storage.ts): AddColumn with its fields in
 * sections; updates of `_grist_Tables_column` records (renames, type and formula changes that
 * convert the stored values, redeclaring SQL columns); RemoveColumn with its fields and helpers.
 */
import {BadRequest, engineError, NotFound} from '../base/index.js';
import {checkColumnType} from '@gristlite/formula';
import {columnSpec} from './formulas.js';
import {pickColIdent} from './identifiers.js';
import type {ColumnMeta, TableMeta} from './meta.js';
import {quoteIdent} from './query.js';
import {META_TYPES} from './schema.js';
import {
  chunks,
  type ColInfo,
  type ColumnsSource,
  DROP_ONE_BY_ONE,
  MAX_TABLE_COLUMNS,
  refListIds,
} from './storage-source.js';
import {
  type CellValue,
  converterFor,
  makeEncoder,
  refTarget,
  type SqlValue,
  sqlDefaultFor,
  sqlTypeFor,
} from './types.js';

/**
 * Columns one write may add one at a time (AddColumn, POST/PUT /columns). Each costs ~12 ms here
 * (metadata reload), and the document answers no one meanwhile: issue 11 measured 7.5 s for 1000.
 * AddTable creates its columns together and is not limited by this.
 */
export const MAX_COLUMNS_ADDED_PER_WRITE = 100;
/** Columns redeclared by one table copy when many change type at once (their values are held meanwhile). */
const RETYPE_GROUP = 50;

/** Grist types of the `_grist_Tables_column` fields (what column updates may set). */
const FIELD_TYPES = META_TYPES._grist_Tables_column;

function sameStored(a: SqlValue | unknown, b: SqlValue): boolean {
  if (Buffer.isBuffer(a) || Buffer.isBuffer(b) || a instanceof Uint8Array) {
    return Buffer.isBuffer(b) && a instanceof Uint8Array && Buffer.compare(Buffer.from(a), b) === 0;
  }
  if (typeof b === 'bigint') {
    return Number(b) === a;
  }
  return a === b || (Number.isNaN(a) && Number.isNaN(b));
}

/** Whether two types are Ref or RefList types of the same table (Grist's is_compatible_ref_type). */
function sameRefTarget(a: string, b: string): boolean {
  const target = refTarget(a);
  return target !== null && target === refTarget(b);
}

/** Ids of `_grist_Views_section_field` rows by the column they show. */
function groupFields(fields: Array<Record<string, CellValue>>): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const f of fields) {
    const ref = Number(f.colRef);
    out.set(ref, [...(out.get(ref) ?? []), Number(f.id)]);
  }
  return out;
}

export class StorageColumns {
  constructor(private readonly s: ColumnsSource) {}

  private avoidColIds(table: TableMeta): Set<string> {
    const avoid = new Set(['id', ...table.columns.map((c) => c.colId)]);
    for (const t of this.s.meta.userTables) {
      if (Number(t.fields.summarySourceTable) === table.tableRef) {
        t.columns.forEach((c) => avoid.add(c.colId));
      }
    }
    return avoid;
  }

  /**
   * AddColumn (and AddVisibleColumn with `visible`): the column, its metadata, and its fields in
   * the raw section, the record card (unless customised), and with `visible` every record widget.
   * With `fields: false`, no fields at all (Grist's doAddColumn: display helpers, AddHiddenColumn).
   */
  addColumn(
    table: TableMeta,
    colIdIn: string | null | undefined,
    info: ColInfo,
    opts: {visible: boolean; fields?: boolean},
  ): {colRef: number; colId: string} {
    if (table.fields.onDemand && info.isFormula === undefined) {
      info = {...info, isFormula: false};
    }
    const isFormula = info.isFormula !== false;
    if (table.fields.summarySourceTable && !isFormula) {
      throw engineError('ValueError', 'AddColumn: cannot add a non-formula column to a summary table');
    }
    if (++this.s.columnsAdded > MAX_COLUMNS_ADDED_PER_WRITE) {
      throw new BadRequest(
        `Too many columns added at once: at most ${MAX_COLUMNS_ADDED_PER_WRITE} per request (AddTable takes more)`,
      );
    }
    if (table.columns.length + 1 >= MAX_TABLE_COLUMNS) {
      throw new BadRequest(
        `Too many columns: table ${table.tableId} may hold at most ${MAX_TABLE_COLUMNS - 1} (SQLite's limit)`,
      );
    }
    const colId = pickColIdent(colIdIn, this.avoidColIds(table));
    const type = String(info.type ?? (isFormula ? 'Any' : 'Text'));
    checkColumnType(type);
    this.s.db.exec(
      `ALTER TABLE ${quoteIdent(table.tableId)} ADD COLUMN ${quoteIdent(colId)} ${sqlTypeFor(type)} DEFAULT ${sqlDefaultFor(type)}`,
    );
    const values: Record<string, CellValue> = {
      parentId: table.tableRef,
      parentPos:
        typeof info._position === 'number' ? info._position : this.s.nextPos('_grist_Tables_column', 'parentPos'),
      colId,
      type,
      isFormula,
      formula: String(info.formula ?? ''),
      widgetOptions: info.widgetOptions !== undefined ? String(info.widgetOptions) : '',
      label: info.label !== undefined ? String(info.label) : colId,
    };
    for (const k of ['rules', 'recalcWhen', 'recalcDeps'] as const) {
      if (info[k] !== undefined) {
        values[k] = info[k]!;
      }
    }
    if (info.visibleCol) {
      values.visibleCol = info.visibleCol;
    }
    const [colRef] = this.s.metaAdd('_grist_Tables_column', [values]);
    this.s.afterAddColumn?.(table.tableId, colRef);
    const isTransform = /^gristHelper_(Transform|Converted)/.test(colId);
    if (!isTransform && opts.fields !== false) {
      const sections = this.s.metaRows('_grist_Views_section').filter((s) => Number(s.tableRef) === table.tableRef);
      const fields = this.s.metaRows('_grist_Views_section_field');
      const raw = Number(table.fields.rawViewSectionRef);
      const card = Number(table.fields.recordCardViewSectionRef);
      const targets: number[] = [];
      if (raw) {
        targets.push(raw);
      }
      const cardRec = sections.find((s) => Number(s.id) === card);
      if (cardRec) {
        const cardFields = fields.filter((f) => Number(f.parentId) === card);
        const modified =
          cardRec.layoutSpec ||
          cardRec.options ||
          (cardRec.rules && refListIds(cardRec.rules).length) ||
          cardRec.theme ||
          cardFields.some((f) => f.widgetOptions);
        if (!modified) {
          targets.push(card);
        }
      }
      if (opts.visible) {
        targets.push(
          ...sections.filter((s) => s.parentKey === 'record' && Number(s.id) !== raw).map((s) => Number(s.id)),
        );
      }
      let pos = this.s.nextPos('_grist_Views_section_field', 'parentPos');
      this.s.metaAdd(
        '_grist_Views_section_field',
        targets.map((parentId) => ({parentId, parentPos: pos++, colRef})),
      );
    }
    this.s.reloadMeta();
    if (this.s.formulas) {
      const t = this.s.getTable(table.tableId);
      this.s.formulas.addColumn(t.tableId, columnSpec(this.s.meta, t.byId.get(colId)!));
    }
    return {colRef, colId};
  }

  /**
   * Updates of `_grist_Tables_column` records (PATCH /columns, ModifyColumn, RenameColumn), with
   * Grist's adjustments: label renames the colId unless untied, colIds are sanitised and made
   * unique, a type change converts the data and resets widgetOptions/displayCol, and turning an
   * Any formula column into data guesses its type.
   */
  updateColumns(table: TableMeta, updates: Array<{colId: string; values: Record<string, CellValue>}>): void {
    const avoidExtra = new Set<string>();
    const planned: Array<{col: ColumnMeta; values: Record<string, CellValue>}> = [];
    for (const {colId, values: input} of updates) {
      const col = table.byId.get(colId);
      if (!col) {
        throw new NotFound(`Column not found "${colId}"`);
      }
      const values: Record<string, CellValue> = {};
      for (const [k, v] of Object.entries(input)) {
        if (k === 'id') {
          continue;
        }
        if (!Object.hasOwn(FIELD_TYPES, k)) {
          throw new BadRequest(`Invalid column "${k}"`);
        }
        values[k] = converterFor(FIELD_TYPES[k])(v);
      }
      if (typeof values.type === 'string' && values.type !== col.type) {
        checkColumnType(values.type);
      }
      if ('parentId' in values && values.parentId !== table.tableRef) {
        throw engineError('ValueError', `Cannot move column ${colId} to another table`);
      }
      const untie = 'untieColIdFromLabel' in values ? values.untieColIdFromLabel : col.fields.untieColIdFromLabel;
      if ('label' in values && !untie && !('colId' in values)) {
        values.colId = values.label;
      }
      if (values.untieColIdFromLabel === false && !('colId' in values)) {
        values.colId = 'label' in values ? values.label : col.fields.label;
      }
      if ('colId' in values && values.colId !== col.colId) {
        const avoid = this.avoidColIds(table);
        avoid.delete(col.colId);
        avoidExtra.forEach((a) => avoid.add(a));
        values.colId = pickColIdent(values.colId === null ? null : String(values.colId), avoid);
        avoidExtra.add(values.colId);
      }
      if (col.isFormula && values.isFormula === false && col.type === 'Any' && !('type' in values)) {
        const data = this.columnValues(table, col)
          .map(([, v]) => v)
          .filter((v) => v !== '' && v !== null);
        values.type =
          data.length && data.filter((v) => typeof v === 'number').length >= data.length * 0.9 ? 'Numeric' : 'Text';
      }
      if ('type' in values) {
        if (!('widgetOptions' in values)) {
          values.widgetOptions = '';
        }
        // Between Ref and RefList of the same table, Grist keeps both (is_compatible_ref_type).
        if (!sameRefTarget(String(values.type), col.type)) {
          if (!('displayCol' in values)) {
            values.displayCol = 0;
          }
          if (!('visibleCol' in values)) {
            values.visibleCol = 0;
          }
        }
      }
      planned.push({col, values});
    }
    // Many renames in one table: one copy of the table with the new names at the end, where each
    // RENAME COLUMN reparses the whole schema (1000 label changes by PUT /columns took 90 s).
    const renames = planned.filter(({col, values}) => 'colId' in values && values.colId !== col.colId);
    const batchRenames = renames.length > DROP_ONE_BY_ONE ? new Map<string, string>() : null;
    const schemaOf = (values: Record<string, CellValue>) => {
      const schema: {type?: string; isFormula?: boolean; formula?: string} = {};
      if ('type' in values) {
        schema.type = String(values.type);
      }
      if ('isFormula' in values) {
        schema.isFormula = Boolean(values.isFormula);
      }
      if ('formula' in values) {
        schema.formula = String(values.formula ?? '');
      }
      return schema;
    };
    // Many type changes that redeclare SQL columns: one table copy per RETYPE_GROUP columns, their
    // values read first (each copy costs the whole table: 300 type changes took 4.5 s one by one).
    const retyped = new Set<number>();
    const decl = new Map(
      (
        this.s.db
          .prepare(`SELECT name, type, dflt_value AS dflt FROM pragma_table_info(?)`)
          .all(table.tableId) as Array<{
          name: string;
          type: string;
          dflt: string | null;
        }>
      ).map((r) => [r.name, r]),
    );
    const retypes = planned.filter(({col, values}) => {
      const d = decl.get(col.colId);
      const type = 'type' in values ? String(values.type) : col.type;
      return (
        d !== undefined &&
        type !== col.type &&
        (sqlTypeFor(type) !== d.type || sqlDefaultFor(type) !== (d.dflt ?? 'NULL'))
      );
    });
    if (retypes.length > DROP_ONE_BY_ONE) {
      for (const group of chunks(retypes, RETYPE_GROUP)) {
        const before = this.s.getTable(table.tableId);
        const rows = group.map(({col}) => this.columnValues(before, col));
        this.rebuildTable(
          table.tableId,
          null,
          '',
          '',
          undefined,
          new Map(
            group
              .map(({values}) => [String(values.type), values])
              .map(([type], i) => [
                group[i].col.colId,
                {type: sqlTypeFor(String(type)), dflt: sqlDefaultFor(String(type))},
              ]),
          ),
        );
        group.forEach(({col, values}, i) => {
          this.modifyColumnSchema(this.s.getTable(table.tableId), col.colId, schemaOf(values), rows[i]);
          retyped.add(col.colRef);
        });
      }
    }
    // Section fields by column, read once (not once per column whose type changes).
    let fieldsByCol: Map<number, number[]> | undefined;
    for (const {col, values} of planned) {
      if (!retyped.has(col.colRef)) {
        this.modifyColumnSchema(this.s.getTable(table.tableId), col.colId, schemaOf(values));
      }
      let colId = col.colId;
      if ('colId' in values && values.colId !== col.colId) {
        colId = String(values.colId);
        this.s.renameSqlColumn(this.s.getTable(table.tableId), col.colId, colId, batchRenames);
      }
      if ('summarySourceCol' in values) {
        this.s.formulasStale = true;
      }
      if (this.s.formulas && ('recalcWhen' in values || 'recalcDeps' in values)) {
        const spec = columnSpec(this.s.meta, {...col, fields: {...col.fields, ...values}});
        this.s.formulas.modifyColumn(table.tableId, colId, {recalcWhen: spec.recalcWhen, recalcDeps: spec.recalcDeps});
      }
      if ('type' in values && values.type !== col.type && !sameRefTarget(String(values.type), col.type)) {
        fieldsByCol ??= groupFields(this.s.metaRows('_grist_Views_section_field'));
        for (const f of fieldsByCol.get(col.colRef) ?? []) {
          this.s.metaUpdate('_grist_Views_section_field', f, {widgetOptions: '', displayCol: 0, visibleCol: 0});
        }
      }
      this.s.metaUpdate('_grist_Tables_column', col.colRef, values);
    }
    if (batchRenames?.size) {
      this.rebuildTable(table.tableId, null, '', '', batchRenames);
    }
    this.s.reloadMeta();
  }

  columnValues(table: TableMeta, col: ColumnMeta): Array<[number, CellValue, unknown]> {
    const rows = this.s.db
      .prepare(`SELECT id, ${quoteIdent(col.colId)} FROM ${quoteIdent(table.tableId)} ORDER BY id`)
      .raw(true)
      .all() as Array<[number, unknown]>;
    return rows.map(([id, raw]) => [id, col.decode(raw), raw]);
  }

  /**
   * doModifyColumn: the column's type/formula change. The SQL column is redeclared when its SQL
   * type or default changes, and stored values are converted to the new type (what converts is
   * converted, what does not becomes alt-text). The formula engine sees the schema change, then
   * the converted values, and recomputes formula columns afterwards.
   */
  private modifyColumnSchema(
    table: TableMeta,
    colId: string,
    change: {type?: string; isFormula?: boolean; formula?: string},
    readBefore?: Array<[number, CellValue, unknown]>,
  ): void {
    const col = this.s.getColumn(table, colId);
    const type = change.type ?? col.type;
    const isFormula = change.isFormula ?? col.isFormula;
    const formula = change.formula ?? col.formula;
    if (type === col.type && isFormula === col.isFormula && formula === col.formula) {
      return;
    }
    const rows = readBefore ?? this.columnValues(table, col);
    const info = this.s.db
      .prepare(`SELECT type, dflt_value AS dflt FROM pragma_table_info(?) WHERE name = ?`)
      .get(table.tableId, colId) as {type: string; dflt: string | null};
    let declType = info.type;
    if (sqlTypeFor(type) !== info.type || sqlDefaultFor(type) !== (info.dflt ?? 'NULL')) {
      this.rebuildTable(table.tableId, colId, sqlTypeFor(type), sqlDefaultFor(type));
      declType = sqlTypeFor(type);
    }
    const convert = converterFor(type, {sourceIsFloat: col.ct.holdsFloats, sourceIsTuple: col.type === 'ChoiceList'});
    const emptyFormula = isFormula && !formula;
    // Built here: the metadata still describes the old type.
    const encode = makeEncoder(type, declType);
    const stmt = this.s.db.prepare(`UPDATE ${quoteIdent(table.tableId)} SET ${quoteIdent(colId)} = ? WHERE id = ?`);
    const changed: number[] = [];
    const changedValues: CellValue[] = [];
    this.s.beforeRows?.(
      table.tableId,
      rows.map(([id]) => id),
    );
    this.s.formulas?.beforeChange(table.tableId, null, [colId]);
    for (const [id, value, raw] of rows) {
      const next = emptyFormula ? null : type !== col.type ? convert(value) : value;
      const stored = encode(next);
      if (!sameStored(raw, stored)) {
        stmt.run(stored, id);
        changed.push(id);
        changedValues.push(next);
      }
    }
    if (this.s.formulas) {
      // As Grist's ModifyColumn: the schema change, then the converted values as an update.
      this.s.formulas.modifyColumn(table.tableId, colId, {type, isFormula, formula});
      if (changed.length) {
        this.s.formulas.updateRecords(table.tableId, changed, {[colId]: changedValues});
      }
    }
    if (changed.length) {
      this.s.changeSet().update(table.tableId, changed, [colId]);
    }
  }

  /** Redeclares one column of a user table (SQLite cannot alter a column's type in place). */
  private rebuildTable(
    tableId: string,
    colId: string | null,
    sqlType: string,
    dflt: string,
    renames?: Map<string, string>,
    retypes?: Map<string, {type: string; dflt: string}>,
  ): void {
    this.s.settleFormulaData();
    const info = this.s.db
      .prepare(`SELECT name, type, dflt_value AS dflt FROM pragma_table_info(?)`)
      .all(tableId) as Array<{name: string; type: string; dflt: string | null}>;
    const cols = info.filter((c) => c.name !== 'id');
    const newName = (name: string) => renames?.get(name) ?? name;
    const defs = cols
      .map((c) =>
        c.name === colId ? {...c, type: sqlType, dflt} : retypes?.has(c.name) ? {...c, ...retypes.get(c.name)!} : c,
      )
      .map((c) => `, ${quoteIdent(newName(c.name))} ${c.type} DEFAULT ${c.dflt ?? 'NULL'}`)
      .join('');
    const names = cols.map((c) => ', ' + quoteIdent(c.name)).join('');
    const newNames = cols.map((c) => ', ' + quoteIdent(newName(c.name))).join('');
    const tmp = quoteIdent(`_tmp_${tableId}`);
    this.s.db.exec(`CREATE TABLE ${tmp} (id INTEGER PRIMARY KEY${defs});
      INSERT INTO ${tmp} (id${newNames}) SELECT id${names} FROM ${quoteIdent(tableId)};
      DROP TABLE ${quoteIdent(tableId)};
      ALTER TABLE ${tmp} RENAME TO ${quoteIdent(tableId)};`);
    this.s.clearStatements();
  }
  /** RemoveColumn (or removal of `_grist_Tables_column` records), with their fields and helpers. */
  removeColumns(colRefs: number[]): void {
    const cols = colRefs.map((ref) => {
      const c = this.s.meta.colsByRef.get(ref);
      if (!c) {
        throw engineError('KeyError', `Column ${ref} not found`);
      }
      return c;
    });
    if (cols.some((c) => c.col.fields.summarySourceCol)) {
      throw engineError('ValueError', 'RemoveColumn: cannot remove a group-by column from a summary table');
    }
    const removed = new Set(colRefs);
    // Drop the columns from section sort specs.
    const tableRefs = new Set(cols.map((c) => c.table.tableRef));
    for (const s of this.s.metaRows('_grist_Views_section')) {
      if (!tableRefs.has(Number(s.tableRef)) || !s.sortColRefs) {
        continue;
      }
      let sort: unknown[];
      try {
        sort = JSON.parse(String(s.sortColRefs));
      } catch {
        continue;
      }
      if (!Array.isArray(sort)) {
        continue;
      }
      const kept = sort.filter((spec) => !removed.has(Math.abs(parseInt(String(spec), 10))));
      if (kept.length !== sort.length) {
        this.s.metaUpdate('_grist_Views_section', Number(s.id), {sortColRefs: JSON.stringify(kept)});
      }
    }
    const fields = this.s.metaRows('_grist_Views_section_field');
    const more = new Set<number>();
    for (const f of fields) {
      if (removed.has(Number(f.colRef))) {
        refListIds(f.rules).forEach((r) => more.add(r));
      }
      if (removed.has(Number(f.visibleCol)) && Number(f.displayCol)) {
        more.add(Number(f.displayCol));
      }
    }
    this.s.metaRemove(
      '_grist_Views_section_field',
      fields.filter((f) => removed.has(Number(f.colRef))).map((f) => Number(f.id)),
    );
    for (const {col} of cols) {
      if (Number(col.fields.displayCol)) {
        more.add(Number(col.fields.displayCol));
      }
      if (!/^gristHelper_(Transform|Converted)/.test(col.colId)) {
        refListIds(col.fields.rules).forEach((r) => more.add(r));
      }
    }
    for (const {col} of this.s.meta.colsByRef.values()) {
      if (removed.has(Number(col.fields.visibleCol)) && Number(col.fields.displayCol)) {
        more.add(Number(col.fields.displayCol));
      }
    }
    const all = [
      ...cols,
      ...[...more]
        .filter((r) => !removed.has(r))
        .sort((a, b) => a - b)
        .map((r) => this.s.meta.colsByRef.get(r))
        .filter((c): c is {table: TableMeta; col: ColumnMeta} => Boolean(c)),
    ];
    const byTable = new Map<string, string[]>();
    for (const {table, col} of all) {
      byTable.set(table.tableId, [...(byTable.get(table.tableId) ?? []), col.colId]);
    }
    if (this.s.beforeDrop) for (const [tableId, colIds] of byTable) this.s.beforeDrop(tableId, colIds);
    this.s.metaRemove(
      '_grist_Tables_column',
      all.map((c) => c.col.colRef),
    );
    for (const [tableId, colIds] of byTable) {
      this.s.settleFormulaData();
      if (colIds.length <= DROP_ONE_BY_ONE) {
        for (const colId of colIds) {
          this.s.db.exec(`ALTER TABLE ${quoteIdent(tableId)} DROP COLUMN ${quoteIdent(colId)}`);
        }
      } else {
        this.rebuildWithout(tableId, new Set(colIds));
      }
      for (const colId of colIds) {
        this.s.formulas?.removeColumn(tableId, colId);
      }
    }
    this.s.reloadMeta();
  }

  /**
   * Drops many columns at once: one copy of the table, where each DROP COLUMN rewrites the table
   * and reparses its schema (measured: 999 columns of an empty table took 26 s one by one).
   */
  private rebuildWithout(tableId: string, drop: Set<string>): void {
    this.s.settleFormulaData();
    const info = this.s.db
      .prepare(`SELECT name, type, dflt_value AS dflt FROM pragma_table_info(?)`)
      .all(tableId) as Array<{name: string; type: string; dflt: string | null}>;
    const kept = info.filter((c) => c.name !== 'id' && !drop.has(c.name));
    const defs = kept.map((c) => `, ${quoteIdent(c.name)} ${c.type} DEFAULT ${c.dflt ?? 'NULL'}`).join('');
    const names = kept.map((c) => ', ' + quoteIdent(c.name)).join('');
    const tmp = quoteIdent(`_tmp_${tableId}`);
    this.s.db.exec(`CREATE TABLE ${tmp} (id INTEGER PRIMARY KEY${defs});
      INSERT INTO ${tmp} (id${names}) SELECT id${names} FROM ${quoteIdent(tableId)};
      DROP TABLE ${quoteIdent(tableId)};
      ALTER TABLE ${tmp} RENAME TO ${quoteIdent(tableId)};`);
    this.s.clearStatements();
  }
}
