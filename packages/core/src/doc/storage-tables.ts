/**
 * Tables of a document (DocStorage's part, storage.ts): AddTable with its metadata, raw view,
 * sections and record card; RenameTable with the references and formulas that name it; RemoveTable
 * with its summary tables, the columns referring to it, its sections and views.
 */
import {aclTableRenames} from '../access/rules/renames.js';
import {applyAclEdits, readAclRows} from './storage-renames.js';
import {BadRequest, engineError} from '../base/index.js';
import {tableSpec} from './formulas.js';
import {pickTableIdent, pickColIdent} from './identifiers.js';
import type {ColumnMeta, TableMeta} from './meta.js';
import {quoteIdent} from './query.js';
import {
  type AddTableOptions,
  type AddTableResult,
  type ColInfo,
  MAX_TABLE_COLUMNS,
  type TablesSource,
} from './storage-source.js';
import {type CellValue, refTarget, sqlDefaultFor, sqlTypeFor} from './types.js';
import {addRawView, addSection, addSectionFields, removeSections, removeViews} from './views.js';

export class StorageTables {
  constructor(private readonly s: TablesSource) {}

  private allTableIds(): string[] {
    return [...this.s.meta.tables.keys()];
  }

  private createSqlTable(tableId: string, cols: Array<{colId: string; type: string}>): void {
    const defs = cols.map((c) => `, ${quoteIdent(c.colId)} ${sqlTypeFor(c.type)} DEFAULT ${sqlDefaultFor(c.type)}`);
    this.s.db.exec(`CREATE TABLE ${quoteIdent(tableId)} (id INTEGER PRIMARY KEY${defs.join('')})`);
  }

  addTable(
    tableIdIn: string | null | undefined,
    columns: Array<{id?: string | null} & ColInfo>,
    opts: AddTableOptions = {primaryView: true},
  ): AddTableResult {
    const specs: Array<{id?: string | null} & ColInfo> = columns.map((c) => ({
      ...c,
      isFormula: c.isFormula ?? Boolean(c.formula),
    }));
    const summarySource = opts.summarySourceTable ?? 0;
    // A summary table has no manualSort and no record card (Grist's doAddTable for summaries).
    if (!summarySource) {
      specs.unshift({id: 'manualSort', type: 'ManualSortPos', formula: '', isFormula: false});
    }
    if (specs.length + 1 > MAX_TABLE_COLUMNS) {
      throw new BadRequest(
        `Too many columns: a table may hold at most ${MAX_TABLE_COLUMNS - 2} besides id and manualSort (SQLite's limit)`,
      );
    }
    const tableId = pickTableIdent(tableIdIn, this.allTableIds());
    const title = tableIdIn || tableId;
    const avoid = new Set(['ID']);
    const colIds = specs.map((c) => {
      const picked = pickColIdent(c.id, avoid);
      avoid.add(picked.toUpperCase());
      return picked;
    });
    const clean = specs.map((c, i) => ({
      colId: colIds[i],
      isFormula: c.isFormula !== false,
      type: String(c.type ?? (c.isFormula !== false ? 'Any' : 'Text')),
      formula: String(c.formula ?? ''),
      label: c.label !== undefined ? String(c.label) : colIds[i],
      widgetOptions: c.widgetOptions !== undefined ? String(c.widgetOptions) : '',
      // Summary group-by columns are linked at creation, so the formula engine sees the grouping.
      ...(summarySource && c.summarySourceCol ? {summarySourceCol: Number(c.summarySourceCol)} : {}),
      ...(summarySource && c.visibleCol ? {visibleCol: Number(c.visibleCol)} : {}),
    }));
    this.createSqlTable(tableId, clean);
    const [tableRef] = this.s.metaAdd('_grist_Tables', [
      {tableId, primaryViewId: 0, ...(summarySource ? {summarySourceTable: summarySource} : {})},
    ]);
    let pos = this.s.nextPos('_grist_Tables_column', 'parentPos');
    this.s.metaAdd(
      '_grist_Tables_column',
      clean.map((c) => ({parentId: tableRef, parentPos: pos++, ...c})),
    );
    this.s.reloadMeta();
    this.s.formulas?.addTable(tableSpec(this.s.meta, this.s.getTable(tableId)));

    const result: AddTableResult = {id: tableRef, table_id: tableId, columns: colIds.slice(summarySource ? 0 : 1)};
    let primaryViewId = 0;
    if (opts.primaryView) {
      const view = addRawView(this.s, tableRef, tableId, title);
      result.views = [view];
      primaryViewId = view.id;
    }
    const rawSection = addSection(this.s, tableRef, 0, 'record', title === tableId || summarySource ? '' : title);
    if (summarySource) {
      this.s.metaUpdate('_grist_Tables', tableRef, {rawViewSectionRef: rawSection});
      this.s.reloadMeta();
      return result;
    }
    const [cardSection] = this.s.metaAdd('_grist_Views_section', [
      {
        tableRef,
        parentId: 0,
        parentKey: 'single',
        title: '',
        borderWidth: 1,
        defaultWidth: 100,
      },
    ]);
    this.s.metaUpdate('_grist_Tables', tableRef, {recordCardViewSectionRef: cardSection});
    addSectionFields(this.s, tableRef, cardSection);
    this.s.metaUpdate('_grist_Tables', tableRef, {primaryViewId, rawViewSectionRef: rawSection});
    this.s.reloadMeta();
    return result;
  }

  renameTable(table: TableMeta, newIdIn: string): string {
    if (table.fields.summarySourceTable) {
      throw engineError('ValueError', 'RenameTable: cannot rename a summary table');
    }
    const oldId = table.tableId;
    const newId = pickTableIdent(
      newIdIn,
      this.allTableIds().filter((t) => t !== oldId),
    );
    if (newId === oldId) {
      return newId;
    }
    this.s.settleFormulaData();
    if (newId.toLowerCase() === oldId.toLowerCase()) {
      const tmp = `_tmp_${oldId}`;
      this.s.db.exec(`ALTER TABLE ${quoteIdent(oldId)} RENAME TO ${quoteIdent(tmp)}`);
      this.s.db.exec(`ALTER TABLE ${quoteIdent(tmp)} RENAME TO ${quoteIdent(newId)}`);
    } else {
      this.s.db.exec(`ALTER TABLE ${quoteIdent(oldId)} RENAME TO ${quoteIdent(newId)}`);
    }
    this.s.changeSet().rename(oldId, newId);
    this.s.metaUpdate('_grist_Tables', table.tableRef, {tableId: newId});
    // Columns referring to the table follow it; formulas naming it are rewritten from their
    // syntax tree (Grist's acl/formula renames), not by pattern.
    const edits = this.s.formulaEdits({kind: 'table', oldId, newId});
    this.s.formulas?.renameTable(oldId, newId);
    for (const t of this.s.meta.userTables) {
      for (const col of t.columns) {
        const values: Record<string, CellValue> = {};
        if (refTarget(col.type) === oldId) {
          values.type = `${col.type.split(':')[0]}:${newId}`;
        }
        const formula = edits.get(col.colRef);
        if (formula !== undefined) {
          values.formula = formula;
          this.s.formulas?.modifyColumn(t.tableId === oldId ? newId : t.tableId, col.colId, {formula});
        }
        if (Object.keys(values).length) {
          this.s.metaUpdate('_grist_Tables_column', col.colRef, values);
        }
      }
    }
    // Rule resources and user attributes' lookup tables follow the rename (Grist's acl.py does).
    applyAclEdits(this.s, aclTableRenames(readAclRows(this.s), oldId, newId));
    this.s.reloadMeta();
    return newId;
  }

  /**
   * Columns of other tables referring to removed tables keep their data under a type that stays
   * valid, as Grist's _convert_reference_col_for_deleted_table: formulas become Any; without a
   * visible and display column a Ref keeps its row ids as Int and a RefList becomes Text of
   * comma-joined ids; a Ref shown through a typed visible column takes the shown values and that
   * column's type and options; anything else becomes Text of what was shown. Every value is read
   * before any column changes (the display helpers and visible columns go with the tables).
   * Summary group-by columns are converted the same way (Grist converts them by following their
   * source column, to the same type and values).
   */
  private convertBackRefs(backRefs: Array<{table: TableMeta; col: ColumnMeta}>): void {
    this.s.settleFormulaData();
    const settings = this.s.meta.settings;
    type Plan = {
      table: TableMeta;
      col: ColumnMeta;
      change: Record<string, CellValue>;
      rows: Array<readonly [number, CellValue]> | null;
    };
    const plans = backRefs.map(({table, col}): Plan => {
      const rowsOf = (v: (id: number, cell: CellValue) => CellValue) =>
        this.s.columnValues(table, col).map(([id, c]) => [id, v(id, c)] as const);
      if (col.isFormula) {
        return {table, col, change: {type: 'Any'}, rows: null};
      }
      const visible = this.s.meta.colsByRef.get(Number(col.fields.visibleCol) || 0)?.col;
      const display = this.s.meta.colsByRef.get(Number(col.fields.displayCol) || 0);
      if (!visible || !display) {
        if (!col.ct.isList) {
          return {
            table,
            col,
            change: {type: 'Int', reverseCol: 0},
            rows: null,
          };
        }
        const ids = (c: CellValue) =>
          Array.isArray(c) && c[0] === 'L' ? c.slice(1).join(',') : typeof c === 'string' ? c : '';
        return {
          table,
          col,
          change: {type: 'Text', reverseCol: 0},
          rows: rowsOf((_, c) => ids(c)),
        };
      }
      const shown = new Map(this.s.columnValues(display.table, display.col).map(([id, v]) => [id, v]));
      if (!col.ct.isList && visible.type !== 'Any') {
        return {
          table,
          col,
          change: {
            type: visible.type,
            widgetOptions: String(visible.fields.widgetOptions ?? ''),
            reverseCol: 0,
          },
          rows: rowsOf((id) => shown.get(id) ?? null),
        };
      }
      const format = col.ct.formatter(col.options, settings, visible.ct.formatter(visible.options, settings));
      return {
        table,
        col,
        change: {type: 'Text', reverseCol: 0},
        rows: rowsOf((id) => format(shown.get(id) ?? null)),
      };
    });
    for (const {table, col, change, rows} of plans) {
      this.s.updateColumns(this.s.getTable(table.tableId), [{colId: col.colId, values: change}]);
      if (rows?.length) {
        this.s.updateRecords(
          this.s.getTable(table.tableId),
          rows.map(([id]) => id),
          new Map([[col.colId, rows.map(([, v]) => v)]]),
          {parse: false},
        );
      }
    }
  }

  removeTables(tableRefs: number[]): void {
    const tables = tableRefs.map((ref) => {
      const t = this.s.meta.byRef.get(ref);
      if (!t) {
        throw engineError('KeyError', `Table ${ref} not found`);
      }
      return t;
    });
    for (const t of this.s.meta.userTables) {
      if (tableRefs.includes(Number(t.fields.summarySourceTable)) && !tables.includes(t)) {
        tables.push(t);
      }
    }
    const ids = new Set(tables.map((t) => t.tableId));
    const refs = new Set(tables.map((t) => t.tableRef));
    const backRefs = this.s.meta.userTables
      .filter((t) => !refs.has(t.tableRef))
      .flatMap((t) => t.columns.filter((c) => ids.has(refTarget(c.type) ?? '')).map((col) => ({table: t, col})));
    if (backRefs.length) {
      this.convertBackRefs(backRefs);
    }

    const sections = this.s.metaRows('_grist_Views_section');
    const doomedSections = sections.filter((s) => refs.has(Number(s.tableRef)));
    const touchedViews = new Set(doomedSections.map((s) => Number(s.parentId)).filter(Boolean));
    removeSections(
      this.s,
      doomedSections.map((s) => Number(s.id)),
    );
    const remaining = new Set(this.s.metaRows('_grist_Views_section').map((s) => Number(s.parentId)));
    const views = new Set([...touchedViews].filter((v) => !remaining.has(v)));
    for (const t of tables) {
      const pv = Number(t.fields.primaryViewId);
      if (pv) {
        views.add(pv);
      }
    }
    removeViews(this.s, [...views]);
    const colRefs = tables.flatMap((t) =>
      this.s
        .metaRows('_grist_Tables_column')
        .filter((c) => Number(c.parentId) === t.tableRef)
        .map((c) => Number(c.id)),
    );
    for (const t of tables) this.s.beforeDrop?.(t.tableId, null);
    this.s.metaRemove('_grist_Tables_column', colRefs);
    this.s.metaRemove('_grist_Tables', [...refs]);
    for (const t of tables) {
      this.s.db.exec(`DROP TABLE ${quoteIdent(t.tableId)}`);
      this.s.changeSet().drop(t.tableId);
      this.s.formulas?.removeTable(t.tableId);
    }
    this.s.reloadMeta();
  }
}
