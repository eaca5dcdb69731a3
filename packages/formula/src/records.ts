/**
 * Grist's record objects as formulas see them: `rec` (Record), RecordSet (RefList cells and
 * lookupRecords results), and the table objects (`Table.lookupOne`, `.lookupRecords`, `.all`).
 * Every read goes through the engine, which records the dependency.
 */
import {
  type Kwargs,
  PyCallable,
  PyDict,
  type PyObject,
  type Value,
  attributeError,
  raise,
  repr,
  truthy,
  typeName,
} from './values.js';
import {PyType, pyCompare} from './ops.js';

/** `table.Record` and `table.RecordSet`, for isinstance() (Grist's UserTable exposes both classes). */
const RECORD_TYPE = new PyType('Record', null, (v) => v instanceof Record);
const RECORDSET_TYPE = new PyType('RecordSet', null, (v) => v instanceof RecordSet);

/**
 * How a record was reached (a lookup key, `Table.all`): reads through it are tracked once per
 * (route, column) instead of once per row. Opaque to records; made by the engine.
 */
export type Via = object | undefined;

/** What records need from the engine. */
export interface RecordHost {
  /** Reads a cell (tracking the dependency, through `via` when given); missing rows give the column default. */
  readCell(tableId: string, colId: string, rowId: number, via?: Via, group?: number[], ahead?: AheadRows): Value;
  hasColumn(tableId: string, colId: string): boolean;
  /** Row ids of a lookup (tracking the dependency on the looked-up keys), and the route to read them through. */
  lookup(tableId: string, kwargs: Kwargs, orderBy: Value): {rows: number[]; via?: Via};
  /** Every row id of a table, ascending (tracking additions/removals), and the route to read them through. */
  allRows(tableId: string): {rows: number[]; via?: Via};
  /** Summary tables: the source records of a summary row (Grist's getSummarySourceGroup), or null. */
  summaryGroup(tableId: string, rowId: number): RecordSet | null;
  /** Whether a row exists (no dependency). */
  rowExists(tableId: string, rowId: number): boolean;
  /** A column of several rows (RecordSet attributes), as readCell of each. */
  readColumn?(tableId: string, colId: string, rowIds: number[], via?: Via): Value[];
}

/**
 * The rows a read of a record's dirty cell may compute first: `rows[0..end]` in order, `rows[end]`
 * the record's own row (PREVIOUS: its group's order up to it). Only a hint: rows that turn out to
 * be in a cycle are left for when they are really needed.
 */
export interface AheadRows {
  rows: number[];
  end: number;
}

export class Record implements PyObject {
  readonly pyType: string;
  constructor(
    readonly host: RecordHost,
    readonly tableId: string,
    readonly rowId: number,
    readonly source?: RecordSet,
    readonly via?: Via,
    readonly ahead?: AheadRows,
  ) {
    this.pyType = tableId;
  }
  getattr(name: string): Value {
    if (name === 'id') {
      // Reading `rec.id` of an existing row; id of the empty record is 0.
      return BigInt(this.rowId);
    }
    if (name === '_row_id') return BigInt(this.rowId);
    if (name === '_table') return new UserTable(this.host, this.tableId);
    // readCell raises AttributeError for a missing column.
    // `group`: the rows of the RecordSet this record came from (their dirty cells are computed together).
    return this.host.readCell(
      this.tableId,
      name,
      this.rowId,
      this.via ?? this.source?.via,
      this.source?.rowIds,
      this.ahead,
    );
  }
  truthy(): boolean {
    return this.rowId !== 0;
  }
  eq(o: Value): boolean {
    return o instanceof Record && o.tableId === this.tableId && o.rowId === this.rowId;
  }
  compare(o: Value): number {
    if (o instanceof Record && o.tableId === this.tableId) return this.rowId - o.rowId;
    return NaN;
  }
  hashKey(): string {
    return `R:${this.tableId}:${this.rowId}`;
  }
  repr(): string {
    return `${this.tableId}[${this.rowId}]`;
  }
  /** int(rec) gives the row id, as Grist's Record.__int__ does. */
  toInt(): bigint {
    return BigInt(this.rowId);
  }
}

export class RecordSet implements PyObject {
  readonly pyType: string;
  constructor(
    readonly host: RecordHost,
    readonly tableId: string,
    readonly rowIds: number[],
    readonly groupBy?: Kwargs,
    readonly sortBy?: Value,
    readonly via?: Via,
  ) {
    this.pyType = tableId;
  }
  len(): number {
    return this.rowIds.length;
  }
  truthy(): boolean {
    return this.rowIds.length > 0;
  }
  *iter(): Iterable<Value> {
    for (const id of this.rowIds) yield new Record(this.host, this.tableId, id, this);
  }
  getitem(key: Value): Value {
    if (typeof key === 'bigint') {
      let i = Number(key);
      if (i < 0) i += this.rowIds.length;
      if (i < 0 || i >= this.rowIds.length) raise('IndexError', 'list index out of range');
      return new Record(this.host, this.tableId, this.rowIds[i], this);
    }
    return raise('TypeError', `RecordSet indices must be integers, not ${typeName(key)}`);
  }
  contains(v: Value): boolean {
    if (v instanceof Record) return v.tableId === this.tableId && this.rowIds.includes(v.rowId);
    if (typeof v === 'bigint') return this.rowIds.includes(Number(v));
    return false;
  }
  getattr(name: string): Value {
    if (name === 'id') return this.rowIds.map((id) => BigInt(id));
    if (name === 'find') return new FindObject(this);
    if (this.host.hasColumn(this.tableId, name)) {
      if (this.host.readColumn) return this.host.readColumn(this.tableId, name, this.rowIds, this.via);
      const out: Value[] = new Array(this.rowIds.length);
      const via = this.via;
      for (let i = 0; i < this.rowIds.length; i++) out[i] = this.host.readCell(this.tableId, name, this.rowIds[i], via);
      return out;
    }
    if (name === '_row_ids') return this.rowIds.map((id) => BigInt(id));
    return raise('AttributeError', `Table '${this.tableId}' has no column '${name}'`);
  }
  eq(o: Value): boolean {
    return (
      o instanceof RecordSet &&
      o.tableId === this.tableId &&
      o.rowIds.length === this.rowIds.length &&
      o.rowIds.every((x, i) => x === this.rowIds[i])
    );
  }
  hashKey(): string {
    return `r:${this.tableId}:${this.rowIds.join(',')}`;
  }
  repr(): string {
    return `${this.tableId}[${JSON.stringify(this.rowIds)}]`;
  }
}

/** `RecordSet.find.lt(...)` etc. are rarely used; only the attribute exists, calls raise. */
class FindObject implements PyObject {
  readonly pyType = 'FindOps';
  constructor(private readonly rs: RecordSet) {}
  getattr(name: string): Value {
    const rs = this.rs;
    const ops: {[k: string]: (c: number) => boolean} = {
      lt: (c) => c < 0,
      le: (c) => c <= 0,
      gt: (c) => c > 0,
      ge: (c) => c >= 0,
      eq: (c) => c === 0,
    };
    if (!Object.hasOwn(ops, name)) return attributeError(this, name);
    const test = ops[name];
    return new PyCallable(name, (args) => {
      const sortCol = typeof rs.sortBy === 'string' ? rs.sortBy.replace(/^-/, '') : null;
      if (!sortCol) raise('ValueError', 'find requires a RecordSet sorted by one column');
      const rev = typeof rs.sortBy === 'string' && rs.sortBy.startsWith('-');
      const list = [...rs.iter()] as Record[];
      const ordered = name === 'lt' || name === 'le' ? [...list].reverse() : list;
      for (const r of ordered) {
        const c = pyCompare(r.getattr(sortCol!), args[0]) * (rev ? -1 : 1);
        if (test(c)) return r;
      }
      return new Record(rs.host, rs.tableId, 0);
    });
  }
}

/** The table object formulas see by name (`Customers`) and as `table`. */
export class UserTable implements PyObject {
  readonly pyType = 'UserTable';
  constructor(
    readonly host: RecordHost,
    readonly tableId: string,
  ) {}
  getattr(name: string): Value {
    const host = this.host;
    const tableId = this.tableId;
    switch (name) {
      case 'lookupRecords':
        return new PyCallable('lookupRecords', (args, kw) => {
          if (args.length) raise('TypeError', 'lookupRecords() takes keyword arguments only');
          const {keys, orderBy} = splitOrderBy(kw);
          const {rows, via} = host.lookup(tableId, keys, orderBy);
          return new RecordSet(host, tableId, rows, keys, orderBy, via);
        });
      case 'lookupOne':
        return new PyCallable('lookupOne', (args, kw) => {
          if (args.length) raise('TypeError', 'lookupOne() takes keyword arguments only');
          const {keys, orderBy} = splitOrderBy(kw);
          const {rows, via} = host.lookup(tableId, keys, orderBy);
          if (!rows.length) return new Record(host, tableId, 0);
          return new Record(
            host,
            tableId,
            rows[0],
            via ? new RecordSet(host, tableId, rows.slice(0, 1), keys, orderBy, via) : undefined,
          );
        });
      case 'all': {
        const {rows, via} = host.allRows(tableId);
        return new RecordSet(host, tableId, rows, undefined, undefined, via);
      }
      case 'table_id':
      case '_table_id':
        return tableId;
      case 'Record':
        return RECORD_TYPE;
      case 'RecordSet':
        return RECORDSET_TYPE;
      case 'getSummarySourceGroup':
        return new PyCallable('getSummarySourceGroup', (args) => {
          const r = args[0];
          if (!(r instanceof Record)) return null;
          return host.summaryGroup(tableId, r.rowId);
        });
      case 'lookupOrAddDerived':
      case 'lookupOrAddDerivedOne':
        return new PyCallable(name, () => raise('UnsupportedError', `${name} is not supported`));
    }
    return raise('AttributeError', `'UserTable' object has no attribute '${name}'`);
  }
  /** `Table(id)` reads a record by id. */
  call(args: Value[]): Value {
    const id = args[0];
    return new Record(this.host, this.tableId, typeof id === 'bigint' ? Number(id) : 0);
  }
  repr(): string {
    return `<UserTable ${this.tableId}>`;
  }
  hashKey(): string {
    return `T:${this.tableId}`;
  }
  eq(o: Value): boolean {
    return o instanceof UserTable && o.tableId === this.tableId;
  }
}

/**
 * The lookup keys and the order a lookup asks for, as Grist's lookupRecords reads them: no
 * `order_by` is row id order (null: no sort); `order_by=None` is the table's manual order (an
 * empty spec, which sortRows completes with manualSort); a legacy `sort_by` string wins and gets
 * no manualSort (a spec ending at 'id', which sortRows cuts there).
 */
function splitOrderBy(kw: Kwargs | null): {keys: Kwargs; orderBy: Value} {
  const keys: Kwargs = Object.create(null);
  let orderBy: Value = null;
  let sortBy: Value = null;
  for (const [k, v] of Object.entries(kw ?? {})) {
    if (k === 'order_by') orderBy = v === null ? [] : v;
    else if (k === 'sort_by') sortBy = v;
    else keys[k] = v;
  }
  if (truthy(sortBy)) {
    if (typeof sortBy !== 'string') {
      raise('TypeError', "sort_by must be a string column ID, with optional '-'; use order_by for tuples");
    }
    orderBy = [sortBy, 'id'];
  }
  return {keys, orderBy};
}

/** What RECORD() needs beyond RecordHost. */
export interface RecordDictHost extends RecordHost {
  columnIds(tableId: string): string[];
  /** The column being computed, whose own cell RECORD(rec) leaves out (as Grist does). */
  currentColumn(): {tableId: string; colId: string} | null;
}

/** RECORD(rec_or_list, dates_as_iso=False, expand_refs=0): the dict form of records (Grist's _prepare_record_dict). */
export function recordToDict(host: RecordDictHost, r: Value, datesAsIso = false, expandRefs = 0): Value {
  if (!(r instanceof Record)) {
    let items: Value[];
    try {
      items = r instanceof RecordSet ? [...r.iter()] : Array.isArray(r) ? r : [];
      if (!(r instanceof RecordSet || Array.isArray(r)) || !items.every((x) => x instanceof Record)) throw new Error();
    } catch {
      return raise('ValueError', 'RECORD() requires a Record or an iterable of Records');
    }
    return items.map((x) => recordToDict(host, x, datesAsIso, expandRefs));
  }
  const d = new PyDict();
  d.set('id', BigInt(r.rowId));
  const errors = new PyDict();
  const cur = host.currentColumn();
  for (const colId of host.columnIds(r.tableId)) {
    // Helper columns are left out, and the cell being computed.
    if (colId === 'id' || colId === 'manualSort' || colId.startsWith('gristHelper_') || colId.startsWith('#')) continue;
    if (cur && cur.tableId === r.tableId && cur.colId === colId) continue;
    let v: Value;
    try {
      v = r.getattr(colId);
      if (
        datesAsIso &&
        v !== null &&
        typeof v === 'object' &&
        (v as PyObject).pyType &&
        /^(date|datetime)$/.test((v as PyObject).pyType)
      ) {
        const iso = (v as PyObject).getattr?.('isoformat');
        if (iso instanceof PyCallable) v = iso.call([], null);
      } else if (expandRefs && (v instanceof Record || v instanceof RecordSet)) {
        v = truthy(v) ? recordToDict(host, v, datesAsIso, expandRefs - 1) : null;
      }
    } catch (e) {
      if (!(e instanceof Error) || !('type' in e)) throw e;
      v = null;
      errors.set(colId, `${(e as {type: string}).type}: ${e.message}`);
    }
    d.set(colId, v);
  }
  if (errors.size) d.set('_error_', errors);
  return d;
}

export {truthy, repr};
