/**
 * Grist's record objects as formulas see them: `rec` (Record), RecordSet (RefList cells and
 * lookupRecords results), and the table objects (`Table.lookupOne`, `.lookupRecords`, `.all`).
 * Every read goes through the engine, which records the dependency.
 */
import {
  Kwargs, PyCallable, PyDict, PyException, PyObject, Value, attributeError, raise, repr, truthy, typeName,
} from './values.js';
import { pyCompare } from './ops.js';

/** What records need from the engine. */
export interface RecordHost {
  /** Reads a cell (tracking the dependency); missing rows give the column default. */
  readCell(tableId: string, colId: string, rowId: number): Value;
  hasColumn(tableId: string, colId: string): boolean;
  /** Row ids of a lookup (tracking the dependency on the looked-up keys). */
  lookup(tableId: string, kwargs: Kwargs, orderBy: Value): number[];
  /** Every row id of a table, ascending (tracking additions/removals). */
  allRows(tableId: string): number[];
  /** Summary tables: the column that holds the group RecordSet, if any. */
  summarySource(tableId: string): string | null;
  /** Whether a row exists (no dependency). */
  rowExists(tableId: string, rowId: number): boolean;
}

export class Record implements PyObject {
  readonly pyType: string;
  constructor(readonly host: RecordHost, readonly tableId: string, readonly rowId: number, readonly source?: RecordSet) {
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
    return this.host.readCell(this.tableId, name, this.rowId);
  }
  truthy(): boolean { return this.rowId !== 0; }
  eq(o: Value): boolean { return o instanceof Record && o.tableId === this.tableId && o.rowId === this.rowId; }
  compare(o: Value): number {
    if (o instanceof Record && o.tableId === this.tableId) return this.rowId - o.rowId;
    return NaN;
  }
  hashKey(): string { return `R:${this.tableId}:${this.rowId}`; }
  repr(): string { return `${this.tableId}[${this.rowId}]`; }
  /** int(rec) gives the row id, as Grist's Record.__int__ does. */
  toInt(): bigint { return BigInt(this.rowId); }
}

export class RecordSet implements PyObject {
  readonly pyType: string;
  constructor(readonly host: RecordHost, readonly tableId: string, readonly rowIds: number[], readonly groupBy?: Kwargs, readonly sortBy?: Value) {
    this.pyType = tableId;
  }
  len(): number { return this.rowIds.length; }
  truthy(): boolean { return this.rowIds.length > 0; }
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
      const out: Value[] = new Array(this.rowIds.length);
      for (let i = 0; i < this.rowIds.length; i++) out[i] = this.host.readCell(this.tableId, name, this.rowIds[i]);
      return out;
    }
    if (name === '_row_ids') return this.rowIds.map((id) => BigInt(id));
    return raise('AttributeError', `Table '${this.tableId}' has no column '${name}'`);
  }
  eq(o: Value): boolean {
    return o instanceof RecordSet && o.tableId === this.tableId && o.rowIds.length === this.rowIds.length && o.rowIds.every((x, i) => x === this.rowIds[i]);
  }
  hashKey(): string { return `r:${this.tableId}:${this.rowIds.join(',')}`; }
  repr(): string { return `${this.tableId}[${JSON.stringify(this.rowIds)}]`; }
}

/** `RecordSet.find.lt(...)` etc. are rarely used; only the attribute exists, calls raise. */
class FindObject implements PyObject {
  readonly pyType = 'FindOps';
  constructor(private readonly rs: RecordSet) {}
  getattr(name: string): Value {
    const rs = this.rs;
    const ops: { [k: string]: (c: number) => boolean } = {
      lt: (c) => c < 0, le: (c) => c <= 0, gt: (c) => c > 0, ge: (c) => c >= 0, eq: (c) => c === 0,
    };
    if (!Object.prototype.hasOwnProperty.call(ops, name)) return attributeError(this, name);
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
  constructor(readonly host: RecordHost, readonly tableId: string) {}
  getattr(name: string): Value {
    const host = this.host;
    const tableId = this.tableId;
    switch (name) {
      case 'lookupRecords':
        return new PyCallable('lookupRecords', (args, kw) => {
          if (args.length) raise('TypeError', 'lookupRecords() takes keyword arguments only');
          const { keys, orderBy } = splitOrderBy(kw);
          const rows = host.lookup(tableId, keys, orderBy);
          return new RecordSet(host, tableId, rows, keys, orderBy);
        });
      case 'lookupOne':
        return new PyCallable('lookupOne', (args, kw) => {
          if (args.length) raise('TypeError', 'lookupOne() takes keyword arguments only');
          const { keys, orderBy } = splitOrderBy(kw);
          const rows = host.lookup(tableId, keys, orderBy);
          return new Record(host, tableId, rows.length ? rows[0] : 0);
        });
      case 'all': return new RecordSet(host, tableId, host.allRows(tableId));
      case 'table_id': case '_table_id': return tableId;
      case 'getSummarySourceGroup':
        return new PyCallable('getSummarySourceGroup', (args) => {
          const r = args[0];
          const col = host.summarySource(tableId);
          if (!(r instanceof Record) || !col) return null;
          return host.readCell(tableId, col, r.rowId);
        });
      case 'lookupOrAddDerived': case 'lookupOrAddDerivedOne':
        return new PyCallable(name, () => raise('UnsupportedError', `${name} is not supported`));
    }
    return raise('AttributeError', `'UserTable' object has no attribute '${name}'`);
  }
  /** `Table(id)` reads a record by id. */
  call(args: Value[]): Value {
    const id = args[0];
    return new Record(this.host, this.tableId, typeof id === 'bigint' ? Number(id) : 0);
  }
  repr(): string { return `<UserTable ${this.tableId}>`; }
  hashKey(): string { return `T:${this.tableId}`; }
  eq(o: Value): boolean { return o instanceof UserTable && o.tableId === this.tableId; }
}

function splitOrderBy(kw: Kwargs | null): { keys: Kwargs; orderBy: Value } {
  const keys: Kwargs = {};
  let orderBy: Value = null;
  for (const [k, v] of Object.entries(kw ?? {})) {
    if (k === 'order_by' || k === 'sort_by') orderBy = v;
    else keys[k] = v;
  }
  return { keys, orderBy };
}

/** RECORD(rec_or_list, dates_as_iso=False, expand_refs=0): the dict form of records. */
export function recordToDict(host: RecordHost & { columnIds(tableId: string): string[] }, r: Value, expandRefs = 0,
                             current?: { tableId: string; colId: string }): Value {
  if (r instanceof RecordSet || Array.isArray(r)) {
    const items = r instanceof RecordSet ? [...r.iter()] : r;
    return items.map((x) => recordToDict(host, x, expandRefs, current));
  }
  if (!(r instanceof Record)) return raise('TypeError', 'RECORD() requires a Record or an iterable of Records');
  const d = new PyDict();
  d.set('id', BigInt(r.rowId));
  for (const colId of host.columnIds(r.tableId)) {
    // Grist skips hidden columns and the cell being evaluated (functions/info.py RECORD).
    if (colId === 'id' || colId === 'manualSort' || colId.startsWith('gristHelper_')) continue;
    if (current && current.tableId === r.tableId && current.colId === colId) continue;
    let v: Value;
    try {
      v = host.readCell(r.tableId, colId, r.rowId);
    } catch (e) {
      if (!(e instanceof PyException)) throw e;   // the engine's "compute that cell first"
      v = null;
      // Grist stores errors as None in RECORD's dict and lists them under _error_.
      let errs = d.get('_error_') as PyDict | undefined;
      if (!errs) { errs = new PyDict(); d.set('_error_', errs); }
      errs.set(colId, e instanceof Error ? `${(e as { type?: string }).type ?? 'Error'}: ${e.message}` : String(e));
    }
    if (v instanceof Record && expandRefs > 0) v = recordToDict(host, v, expandRefs - 1);
    else if (v instanceof Record) v = BigInt(v.rowId);
    else if (v instanceof RecordSet) v = expandRefs > 0 ? recordToDict(host, v, expandRefs - 1) : v.rowIds.map((x) => BigInt(x));
    d.set(colId, v);
  }
  return d;
}

export { truthy, repr };
