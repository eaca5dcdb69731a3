/**
 * Grist's user actions (`POST /apply`), one handler per action name: record actions write through
 * the document's bulk operations (conversion, metadata rules, formulas, listeners), schema actions
 * through its storage. `GristDoc.applyUserActions` runs a bundle in one transaction and looks each
 * action up here; an unknown name is a 400.
 */
import {BadRequest, engineError, shownValue} from '../base/index.js';
import {setDisplayFormula} from './display.js';
import {createViewSection, removeViewSections, updateSummaryViewSection} from './summary-actions.js';
import {removeViews} from './views.js';
import type {TableMeta} from './meta.js';
import type {AddTableResult, ColInfo, DocStorage, WriteOptions} from './storage.js';
import type {CellValue} from './types.js';
import type {UpsertOptions, UpsertRecord} from './api-types.js';

/** The document operations user actions use (GristDoc's own, bound to it). */
export interface ActionTarget {
  readonly storage: DocStorage;
  actionTable(tableId: unknown): string;
  bulkAdd(
    tableId: string,
    rowIds: Array<number | null>,
    colValues: Map<string, CellValue[]>,
    opts: WriteOptions,
  ): number[];
  bulkUpdate(tableId: string, rowIds: number[], colValues: Map<string, CellValue[]>, opts: WriteOptions): void;
  bulkRemove(tableId: string, rowIds: CellValue[]): void;
  bulkAddOrUpdate(
    tableId: string,
    records: UpsertRecord[],
    options: UpsertOptions,
  ): {recordIds: Array<number[] | undefined>; added: number[]; updated: number[][]};
}

/** What a handler gets: the action's name, the write's options, the document, and the shared argument checks. */
export interface ActionContext extends ActionTarget {
  readonly name: string;
  readonly opts: WriteOptions;
  /** An argument that must be an object (column values, column info). */
  obj(v: unknown, what: string): Record<string, CellValue>;
  /** Column values of a bulk action: each a list of `n` values. */
  bulk(v: unknown, n: number): Map<string, CellValue[]>;
  /** A list of row ids. */
  ids(v: unknown): Array<number | null>;
  /** A user table (not a metadata one) by id. */
  userTable(v: unknown): TableMeta;
  /** A new table or column id: a string, or null for a generated one. */
  newId(v: unknown, what: string): string | null;
  /** Column info (or a column of AddTable): an object whose values are cell values, never objects. */
  colInfo(v: unknown, what: string): Record<string, CellValue>;
}

/** One user action: its arguments after the name; returns the action's retValue. */
export type UserActionHandler = (a: ActionContext, args: unknown[]) => unknown;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A metadata cell: a primitive, or a list of them (`["L", ...]`), as no column field holds a dict. */
function isMetaCell(v: unknown, depth = 0): boolean {
  if (v === null || typeof v !== 'object') {
    return true;
  }
  return Array.isArray(v) && depth < 64 && v.every((x) => isMetaCell(x, depth + 1));
}

/** The context of one action of a bundle. */
export function actionContext(name: string, opts: WriteOptions, target: ActionTarget): ActionContext {
  return {
    name,
    opts,
    get storage() {
      return target.storage;
    },
    actionTable: (t) => target.actionTable(t),
    bulkAdd: (...x) => target.bulkAdd(...x),
    bulkUpdate: (...x) => target.bulkUpdate(...x),
    bulkRemove: (...x) => target.bulkRemove(...x),
    bulkAddOrUpdate: (...x) => target.bulkAddOrUpdate(...x),
    obj(v, what) {
      if (!isPlainObject(v)) {
        throw engineError('TypeError', `${name}: ${what} must be an object`);
      }
      return v as Record<string, CellValue>;
    },
    bulk(v, n) {
      const cols = new Map<string, CellValue[]>();
      for (const [k, vals] of Object.entries(this.obj(v, 'column values'))) {
        if (!Array.isArray(vals) || vals.length !== n) {
          throw engineError('ValueError', `${name}: column ${k} must have ${n} values`);
        }
        cols.set(k, vals);
      }
      return cols;
    },
    ids(v) {
      if (!Array.isArray(v)) {
        throw engineError('TypeError', `${name}: row ids must be a list`);
      }
      return v as Array<number | null>;
    },
    userTable(v) {
      const t = target.storage.getTable(target.actionTable(v));
      if (t.isMeta) {
        throw engineError('ValueError', `${name}: ${String(v)} is a metadata table`);
      }
      return t;
    },
    newId(v, what) {
      if (v !== null && v !== undefined && typeof v !== 'string') {
        throw engineError('TypeError', `${name}: ${what} must be a string`);
      }
      return v ?? null;
    },
    colInfo(v, what) {
      const info = this.obj(v, what);
      for (const [k, x] of Object.entries(info)) {
        if (!isMetaCell(x)) {
          throw engineError('TypeError', `${name}: ${what} field ${k} must be a cell value, not an object`);
        }
      }
      return info;
    },
  };
}

/** Every user action gristlite runs, by name (Grist's names and argument order). */
export const USER_ACTIONS: Readonly<Record<string, UserActionHandler>> = {
  AddRecord: (a, args) => {
    const values = a.obj(args[2] ?? {}, 'column values');
    const cols = new Map(Object.entries(values).map(([k, v]) => [k, [v]]));
    return a.bulkAdd(a.actionTable(args[0]), [args[1] as number | null], cols, a.opts)[0];
  },
  BulkAddRecord: (a, args) => {
    const rowIds = a.ids(args[1]);
    return a.bulkAdd(a.actionTable(args[0]), rowIds, a.bulk(args[2] ?? {}, rowIds.length), a.opts);
  },
  ReplaceTableData: (a, args) => {
    const rowIds = a.ids(args[1]);
    a.storage.replaceTableData(a.userTable(args[0]), rowIds, a.bulk(args[2] ?? {}, rowIds.length), a.opts);
    return null;
  },
  UpdateRecord: (a, args) => {
    const values = a.obj(args[2], 'column values');
    a.bulkUpdate(
      a.actionTable(args[0]),
      [args[1] as number],
      new Map(Object.entries(values).map(([k, v]) => [k, [v]])),
      a.opts,
    );
    return null;
  },
  BulkUpdateRecord: (a, args) => {
    const rowIds = a.ids(args[1]) as number[];
    a.bulkUpdate(a.actionTable(args[0]), rowIds, a.bulk(args[2], rowIds.length), a.opts);
    return null;
  },
  RemoveRecord: (a, args) => {
    a.bulkRemove(a.actionTable(args[0]), [args[1] as CellValue]);
    return null;
  },
  BulkRemoveRecord: (a, args) => {
    a.bulkRemove(a.actionTable(args[0]), a.ids(args[1]));
    return null;
  },
  AddOrUpdateRecord: (a, args) => {
    const tableId = a.userTable(args[0]).tableId;
    const options = isPlainObject(args[3]) ? args[3] : {};
    const upsertOpts: UpsertOptions = {
      ...a.opts,
      onmany: (options.on_many as UpsertOptions['onmany']) ?? 'first',
      noadd: options.add === false,
      noupdate: options.update === false,
      allowEmptyRequire: Boolean(options.allow_empty_require),
    };
    let records: UpsertRecord[];
    if (a.name === 'AddOrUpdateRecord') {
      records = [{require: a.obj(args[1], 'require'), fields: a.obj(args[2] ?? {}, 'column values')}];
    } else {
      const req = a.obj(args[1], 'require');
      const fields = a.obj(args[2] ?? {}, 'column values');
      const n = Array.isArray(Object.values(req)[0])
        ? (Object.values(req)[0] as unknown[]).length
        : ((Object.values(fields)[0] as unknown[] | undefined)?.length ?? 0);
      const r = a.bulk(req, n);
      const f = a.bulk(fields, n);
      records = Array.from({length: n}, (_, i) => ({
        require: Object.fromEntries([...r].map(([k, v]) => [k, v[i]])),
        fields: Object.fromEntries([...f].map(([k, v]) => [k, v[i]])),
      }));
    }
    const outcome = a.bulkAddOrUpdate(tableId, records, upsertOpts);
    if (a.name === 'AddOrUpdateRecord') {
      return null;
    }
    return {recordIds: outcome.recordIds, addRecordIds: outcome.added, updateRecordIds: outcome.updated};
  },
  BulkAddOrUpdateRecord: (a, args) => USER_ACTIONS.AddOrUpdateRecord(a, args),
  AddTable: (a, args) => {
    const cols =
      a.name === 'AddEmptyTable'
        ? [{}, {}, {}].map(() => ({id: null, isFormula: true}))
        : (Array.isArray(args[1]) ? args[1] : []).map((c) => {
            const spec = a.colInfo(c, 'column');
            return {...spec, id: a.newId(spec.id, 'column id')} as {id: string | null} & ColInfo;
          });
    const result: AddTableResult = a.storage.addTable(a.newId(args[0], 'table id'), cols);
    return result;
  },
  AddEmptyTable: (a, args) => USER_ACTIONS.AddTable(a, args),
  RemoveTable: (a, args) => {
    a.storage.removeTables([a.userTable(args[0]).tableRef]);
    return null;
  },
  RenameTable: (a, args) => {
    const table = a.userTable(args[0]);
    return a.storage.renameTable(table, String(a.newId(args[1], 'new table id')));
  },
  AddColumn: (a, args) => {
    const table = a.userTable(args[0]);
    const colId = a.newId(args[1], 'column id');
    const info = a.colInfo(args[2] ?? {}, 'column info') as ColInfo;
    if (a.name === 'AddHiddenColumn') {
      return a.storage.addColumn(table, colId, info, {visible: false, fields: false});
    }
    return a.storage.addColumn(table, colId, info, {visible: a.name === 'AddVisibleColumn'});
  },
  AddVisibleColumn: (a, args) => USER_ACTIONS.AddColumn(a, args),
  AddHiddenColumn: (a, args) => USER_ACTIONS.AddColumn(a, args),
  RemoveColumn: (a, args) => {
    const table = a.userTable(args[0]);
    const col = table.byId.get(shownValue(args[1]));
    if (!col) {
      throw engineError('KeyError', `'${shownValue(args[1])}'`);
    }
    a.storage.removeColumns([col.colRef]);
    return null;
  },
  RenameColumn: (a, args) => {
    const table = a.userTable(args[0]);
    if (!table.byId.has(shownValue(args[1]))) {
      throw engineError('KeyError', `'${shownValue(args[1])}'`);
    }
    a.storage.updateColumns(table, [
      {colId: shownValue(args[1]), values: {colId: String(a.newId(args[2], 'new column id'))}},
    ]);
    const col = a.storage.meta.colsByRef.get(table.byId.get(shownValue(args[1]))!.colRef);
    return col?.col.colId ?? null;
  },
  ModifyColumn: (a, args) => {
    const table = a.userTable(args[0]);
    if (!table.byId.has(shownValue(args[1]))) {
      throw engineError('KeyError', `'${shownValue(args[1])}'`);
    }
    const info = {...a.colInfo(args[2], 'column info')};
    delete info.colId;
    delete info.id;
    delete info.parentId;
    if ('_position' in info) {
      info.parentPos = info._position;
      delete info._position;
    }
    a.storage.updateColumns(table, [{colId: shownValue(args[1]), values: info}]);
    return null;
  },
  SetDisplayFormula: (a, args) => {
    setDisplayFormula(
      a.storage,
      a.userTable(args[0]).tableId,
      args[1] as CellValue,
      args[2] as CellValue,
      args[3] as CellValue,
    );
    return null;
  },
  CreateViewSection: (a, args) => createViewSection(a.storage, args),
  UpdateSummaryViewSection: (a, args) => updateSummaryViewSection(a.storage, args),
  RemoveViewSection: (a, args) => {
    const id = sectionOrViewId(args[0], a.name);
    if (!a.storage.metaRows('_grist_Views_section').some((r) => Number(r.id) === id)) {
      throw engineError('KeyError', `View section ${id} not found`);
    }
    removeViewSections(a.storage, [id]);
    return null;
  },
  RemoveView: (a, args) => {
    const id = sectionOrViewId(args[0], a.name);
    if (!a.storage.metaRows('_grist_Views').some((r) => Number(r.id) === id)) {
      throw engineError('KeyError', `View ${id} not found`);
    }
    removeViews(a.storage, [id]);
    return null;
  },
};

function sectionOrViewId(v: unknown, name: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw engineError('TypeError', `${name}: the id must be an integer`);
  }
  return v;
}

/** The handler of a user action, or a 400 naming it. */
export function userAction(name: string): UserActionHandler {
  if (!Object.hasOwn(USER_ACTIONS, name)) {
    throw new BadRequest(`Unsupported user action: ${name}`);
  }
  return USER_ACTIONS[name];
}
