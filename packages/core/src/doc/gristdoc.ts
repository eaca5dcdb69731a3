/**
 * GristDoc: one open `.grist` document. Synchronous (better-sqlite3, WAL mode); every public write
 * runs in one SQLite transaction and reports what it changed to `onChange` listeners inside that
 * transaction. Formulas are computed by the formula engine (formula/engine.ts): every action of a
 * write is mirrored to it, then it recalculates, and the cells that changed are written in the same
 * transaction (docs/formulas.md).
 */
import Database from 'better-sqlite3';
import {createHash} from 'node:crypto';
import {BadRequest, engineError, NotFound, shownValue} from '../errors.js';
import {createDocFile, type CreateDocOptions} from './create.js';
import {ChangeSet, type ColInfo, DocStorage, type TableChange, type WriteOptions} from './storage.js';
import {DataStamp} from './colstats.js';
import {
  formulasComputed,
  hasFormulas,
  loadFormulaEngine,
  markFormulasComputed,
  readsMetadata,
  registerCellFunction,
  useDocTimezone,
  writeRecalc,
} from './formulas.js';
import type {FormulaEngine} from '../formula/engine.js';
import {syncSummaries} from './summary.js';
import {removeUnusedDisplayCols} from './display.js';
import {ColumnSlots} from './colorder.js';
import {ReadCache} from './readcache.js';
import {actionContext, type ActionTarget, userAction} from './useractions.js';
import {removeSections, removeViews} from './views.js';
import {checkColumnCount, checkInput, checkSchemaActionCount, refuseDuplicateIds} from './input.js';
import {requireSameFields} from './bodies.js';
import type {DocGuard, RowValues} from './guard.js';
import {Placeholders} from './placeholders.js';
import {refreshRules} from '../access/rules/write.js';

export {checkInput, MAX_INPUT_DEPTH, MAX_SCHEMA_ACTIONS_PER_APPLY} from './input.js';
import {bulkAddOrUpdate, type UpsertTarget} from './upsert.js';
import {recordJsonSql} from './recordsjson.js';
import type {ColumnMeta, TableMeta} from './meta.js';
import {buildRecordQuery, NATURAL_KEY_FN, naturalKey, quoteIdent} from './query.js';
import {isGristDocument, needsUpgrade, readVersions, upgradeDocument} from './migrations/index.js';
import {SCHEMA_VERSION} from './schema.js';
import {type CellValue, converterFor} from './types.js';
import {checkMetaWrite, type WriterRole} from './metarules.js';

export type {TableChange} from './storage.js';

/** Filter, sort, limit and form of a record read, as `/records` reads them from the query string. */
export interface RecordQuery {
  /** `{colId: [allowed values]}`; every value list must be an array. */
  filter?: Record<string, unknown> | null;
  /** `"A,-B:naturalSort"` or `["A", "-B"]`. */
  sort?: string | string[];
  /** 0 or undefined: no limit; negative: drop that many rows from the end (Grist's quirk). */
  limit?: number;
  /** Include manualSort and gristHelper_* columns (records form only; /data has them always). */
  hidden?: boolean;
  cellFormat?: 'normal' | 'typed';
}

/** A record as `/records` answers it: id, fields, and the error type of each error cell. */
export interface ApiRecord {
  id: number;
  fields: Record<string, CellValue>;
  errors?: Record<string, string>;
}

/** A table as `GET /tables` lists it. */
export interface TableInfo {
  id: string;
  fields: {
    tableRef: number;
    primaryViewId: number;
    summarySourceTable: number;
    onDemand: boolean;
    rawViewSectionRef: number;
    recordCardViewSectionRef: number;
  };
}

/** A column as `GET /columns` lists it: id and its metadata fields. */
export interface ColumnInfo {
  id: string;
  fields: Record<string, CellValue>;
}

/** A column to add: an optional id (normalised as Grist does) and metadata fields. */
export interface ColumnSpec {
  id?: string | null;
  fields?: Record<string, CellValue>;
}

/** A table to add: an optional id (normalised as Grist does) and its columns. */
export interface TableSpec {
  id?: string | null;
  columns: ColumnSpec[];
}

/** One add-or-update: the values that find the record (`require`) and those to set (`fields`). */
export interface UpsertRecord {
  require: Record<string, CellValue>;
  fields?: Record<string, CellValue>;
}

/** Options of a write: parsing, and the caller's role (metadata rules; in-process callers default to owners). */
export interface WriteAs extends Partial<WriteOptions> {
  role?: WriterRole;
}

/** Options of add-or-update (`PUT /records`): `onmany`, `noadd`, `noupdate`, `allow_empty_require`. */
export interface UpsertOptions extends WriteAs {
  onmany?: 'first' | 'none' | 'all';
  noadd?: boolean;
  noupdate?: boolean;
  allowEmptyRequire?: boolean;
}

/** Which records an add-or-update found, added and updated. */
export interface UpsertResult {
  recordIds: number[][];
  addRecordIds: number[];
  updateRecordIds: number[][];
}

/** What `/apply` answers: the action's number and hash, each action's return value. */
export interface ApplyResult {
  actionNum: number;
  actionHash: string;
  retValues: unknown[];
  isModification: boolean;
}

/** Options of `GristDoc.open`. */
export interface OpenOptions {
  readonly?: boolean;
  /**
   * Where answers of recent record reads are kept (readcache.ts): the engine shares one, bounded
   * in bytes, between its open documents. Default: one of 8 MB for this document alone.
   * @internal
   */
  readCache?: ReadCache;
}

/** The read cache of a document opened without one (the engine passes its own, of 64 MB). */
const OWN_READ_CACHE_BYTES = 8 * 1024 * 1024;

/** `writeSeq` numbers the write, so that state kept between the two hooks can be matched up. */
export type ChangeListener = (change: TableChange & {writeSeq: number}) => void;
/** Called inside a write before user rows are updated or removed (the old values are still there). */
export type BeforeRowsListener = (tableId: string, rowIds: number[], writeSeq: number) => void;

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

const COLUMN_FIELD_ORDER = [
  'parentId',
  'parentPos',
  'type',
  'widgetOptions',
  'isFormula',
  'formula',
  'label',
  'description',
  'untieColIdFromLabel',
  'summarySourceCol',
  'displayCol',
  'visibleCol',
  'rules',
  'recalcWhen',
  'recalcDeps',
  'reverseCol',
];

/** How often volatile formulas (NOW(), TODAY()) are refreshed: hourly, as in Grist. */
const CLOCK_MSEC = 3600_000;

function pick(obj: Record<string, CellValue> | undefined, keys: string[]): ColInfo {
  const out: ColInfo = {};
  for (const k of keys) {
    if (obj && obj[k] !== undefined) {
      out[k] = obj[k];
    }
  }
  return out;
}

/** One `.grist` document, opened on one better-sqlite3 connection: tables, columns, records, user actions and formulas, each write one SQLite transaction. Synchronous. */
export class GristDoc {
  private readonly storage: DocStorage;
  /** The operations user actions run on (useractions.ts), bound to this document. */
  private readonly actionTarget: ActionTarget = ((doc: GristDoc): ActionTarget => ({
    get storage() {
      return doc.storage;
    },
    actionTable: (t) => doc.actionTable(t),
    bulkAdd: (...x) => doc.bulkAdd(...x),
    bulkUpdate: (...x) => doc.bulkUpdate(...x),
    bulkRemove: (...x) => doc.bulkRemove(...x),
    bulkAddOrUpdate: (...x) => doc.bulkAddOrUpdate(...x),
  }))(this);
  private readonly listeners = new Set<ChangeListener>();
  private readonly beforeListeners = new Set<BeforeRowsListener>();
  private writeSeq = 0;
  /** Grist's in-memory order of column records, which `GET /columns` follows (colorder.ts). */
  private readonly columnSlots = new ColumnSlots();
  private actionNum: number;
  /** The role of the current write's caller (metadata write rules, metarules.ts). */
  private writer: WriterRole = 'owners';
  /** Access rules of the current call's user (`as`), or null: reads unfiltered, writes unchecked. */
  private guard: DocGuard | null = null;
  /** Runs a function in one SQLite transaction (made once: better-sqlite3 builds it per call). */
  private readonly inTransaction: (fn: () => unknown) => unknown;
  private readonly dataStamp: DataStamp;
  /** This document's key in the read cache. */
  private readonly cacheOwner: string;
  private closed = false;
  /** Whether `engine.formulas` reflects the document (false: load it at the next write). */
  private formulasLoaded = false;
  /** When volatile formulas (NOW(), TODAY()) were last refreshed. */
  private clockAt = Date.now();
  /** Whether the document is known to carry the "formulas computed" mark. */
  private marked = false;
  /** How many `fetchRecordsJson` answers SQLite wrote, and how many were built in JS (not cached). */
  readonly recordsJsonPaths = {sql: 0, js: 0};

  /**
   * Opens a document. Opened for writing, a document of an older schema is upgraded first (in one
   * transaction; a failure answers 400 and leaves the file as it was); one of a newer schema than
   * gristlite's is opened read-only and never written.
   */
  static open(path: string, options: OpenOptions = {}): GristDoc {
    let db = new Database(path, {readonly: options.readonly ?? false, fileMustExist: true});
    try {
      db.pragma('trusted_schema = OFF');
      if (!options.readonly) {
        const versions = readVersions(db);
        if (versions.schema > SCHEMA_VERSION) {
          db.close();
          db = new Database(path, {readonly: true, fileMustExist: true});
          db.pragma('trusted_schema = OFF');
        } else if (isGristDocument(db)) {
          // Other files are refused below, unchanged.
          if (needsUpgrade(versions)) {
            upgradeDocument(db); // A failure throws MigrationError, a 400.
          }
          db.pragma('journal_mode = WAL');
        }
      }
      return new GristDoc(path, db, options.readCache ?? new ReadCache(OWN_READ_CACHE_BYTES));
    } catch (e) {
      db.close();
      throw e;
    }
  }

  /** Creates a new document (as Grist does: Table1 with columns A, B, C) and opens it. */
  static create(path: string, options: CreateDocOptions = {}): GristDoc {
    createDocFile(path, options);
    return GristDoc.open(path);
  }

  private constructor(
    readonly path: string,
    readonly db: Database.Database,
    private readonly readCache: ReadCache,
  ) {
    this.cacheOwner = readCache.newOwner();
    this.inTransaction = db.transaction((fn: () => unknown) => fn());
    this.dataStamp = new DataStamp(db);
    db.function(NATURAL_KEY_FN, {deterministic: true}, naturalKey);
    const bulkCells = registerCellFunction(db);
    this.storage = new DocStorage(db);
    this.storage.bulkCells = bulkCells;
    const hist = db.prepare(`SELECT max(actionNum) AS n FROM _gristsys_ActionHistory`).get() as
      | {n: number | null}
      | undefined;
    this.actionNum = hist?.n ?? 0;
  }

  /** Closes the connection (pending webhook work must be stopped first: the engine does). */
  close(): void {
    if (this.closed) {
      return;
    }
    this.closed = true;
    this.readCache.forget(this.cacheOwner);
    this.db.close();
  }

  get schemaVersion(): number {
    return this.storage.meta.schemaVersion;
  }
  get timezone(): string {
    return this.storage.meta.timezone;
  }
  /** Writes need the current schema (46): documents opened read-only or newer stay unwritten. */
  get isWritable(): boolean {
    return this.readOnlyReason === null;
  }

  /** Why a write would be refused (the 400 a write answers), or null when the document is writable. */
  get readOnlyReason(): string | null {
    if (this.schemaVersion > SCHEMA_VERSION) {
      return (
        `Document has schema version ${this.schemaVersion}, newer than gristlite's ${SCHEMA_VERSION}: ` +
        'it is served read-only'
      );
    }
    if (this.db.readonly) {
      return 'Document is open read-only';
    }
    if (this.schemaVersion !== SCHEMA_VERSION) {
      return `Document has schema version ${this.schemaVersion}; it is upgraded to ${SCHEMA_VERSION} when opened for writing`;
    }
    return null;
  }

  /** Registers a listener called inside a write before rows are updated or removed. */
  onBeforeRows(listener: BeforeRowsListener): () => void {
    this.beforeListeners.add(listener);
    return () => {
      this.beforeListeners.delete(listener);
    };
  }

  /** Registers a listener called, inside the write's transaction, once per changed table. */
  onChange(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  // -------------------------------------------------------------------------------------------
  // Access rules

  /**
   * This document as one user sees it under access rules: every call runs with `guard`, so reads
   * are filtered (tables, columns, rows, cells) and writes are checked inside their transaction.
   * A null guard (no rules) is the document itself.
   */
  as(guard: DocGuard | null): GristDoc {
    if (!guard) return this;
    return new Proxy(this, {
      get: (target, key) => {
        const v = Reflect.get(target, key, target);
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => target.withGuard(guard, () => v.apply(target, args));
      },
    });
  }

  private withGuard<T>(guard: DocGuard, fn: () => T): T {
    const outer = this.guard;
    this.guard = guard;
    try {
      return fn();
    } finally {
      this.guard = outer;
    }
  }

  /** Rows by id, decoded, every column (what rules see as `rec`). */
  private readRows(tableId: string, ids: readonly number[]): Map<number, RowValues> {
    const table = this.storage.meta.tables.get(tableId);
    const out = new Map<number, RowValues>();
    if (!table || !ids.length) return out;
    const cols = table.columns;
    for (let start = 0; start < ids.length; start += 500) {
      const part = ids.slice(start, start + 500);
      const rows = this.storage
        .stmt(`SELECT ${columnList(cols)} FROM ${quoteIdent(tableId)} WHERE id IN (${part.map(() => '?').join(',')})`)
        .raw(true)
        .all(...part) as unknown[][];
      for (const row of rows) {
        const values: RowValues = {};
        cols.forEach((c, j) => {
          values[c.colId] = c.decode(row[j + 1]);
        });
        out.set(row[0] as number, values);
      }
    }
    return out;
  }

  /**
   * Under access rules, the attachments held by a cell the user can read (Grist lets a user reach
   * those only); null when there are no rules or the user may read everything.
   */
  readableAttachments(): ReadonlySet<number> | null {
    const guard = this.guard;
    if (!guard || guard.canReadEverything()) return null;
    const out = new Set<number>();
    for (const t of this.storage.meta.userTables) {
      if (!guard.tableVisible(t.tableId)) continue;
      const cols = t.columns.filter((c) => c.type === 'Attachments').map((c) => c.colId);
      if (!cols.length) continue;
      for (const r of this.fetchGuarded(t, {hidden: true})) {
        for (const c of cols) {
          const v = r.fields[c];
          if (Array.isArray(v) && v[0] === 'L') for (const id of v.slice(1)) if (typeof id === 'number') out.add(id);
        }
      }
    }
    return out;
  }

  /** The first row of a table whose column equals `value` (user attributes of access rules). */
  lookupRow(tableId: string, colId: string, value: CellValue, caseInsensitive: boolean): RowValues | null {
    const table = this.storage.meta.tables.get(tableId);
    const col = table?.byId.get(colId);
    if (!table || !col || table.isMeta) return null;
    const where =
      caseInsensitive && typeof value === 'string'
        ? `lower(${quoteIdent(colId)}) = lower(?)`
        : `${quoteIdent(colId)} = ?`;
    const row = this.storage
      .stmt(`SELECT id FROM ${quoteIdent(tableId)} WHERE ${where} ORDER BY id LIMIT 1`)
      .raw(true)
      .get(typeof value === 'boolean' ? Number(value) : value) as [number] | undefined;
    if (!row) return null;
    const found = this.readRows(tableId, [row[0]]).get(row[0]) ?? null;
    return found ? {...found, id: row[0]} : null;
  }

  // -------------------------------------------------------------------------------------------
  // Transactions

  private write<T>(fn: () => T, role: WriterRole = 'owners'): T {
    const readOnly = this.readOnlyReason;
    if (readOnly !== null) {
      throw new BadRequest(readOnly);
    }
    if (this.storage.changes) {
      return fn();
    } // Already inside a write.
    const changes = new ChangeSet();
    this.storage.changes = changes;
    this.storage.columnsAdded = 0;
    const seq = ++this.writeSeq;
    this.storage.beforeRows = this.beforeListeners.size
      ? (tableId, rowIds) => {
          for (const l of this.beforeListeners) {
            l(tableId, rowIds, seq);
          }
        }
      : null;
    const metaVersion = this.storage.meta.version;
    this.writer = role;
    const guard = this.guard;
    if (guard) {
      guard.beginWrite((tableId, ids) => this.readRows(tableId, ids));
      this.storage.guard = guard;
    }
    const restoreZone = useDocTimezone(this.storage.meta);
    try {
      return this.inTransaction(() => {
        this.columnSlots.start(this.db);
        this.loadFormulas();
        const result = fn();
        // Grist's auto-removal of display helpers left unused by this write's schema changes.
        if (changes.touched('_grist_Tables_column') || changes.touched('_grist_Views_section_field')) {
          removeUnusedDisplayCols(this.storage);
        }
        // Rules written: their parsed form as Grist writes it, and a rule set Grist accepts.
        if (changes.touched('_grist_ACLRules') || changes.touched('_grist_ACLResources')) {
          const rules = changes.list().find((c) => c.tableId === '_grist_ACLRules');
          refreshRules(this.db, rules ? [...rules.added, ...rules.updated] : []);
        }
        if (changes.touched('_grist_DocInfo')) {
          this.storage.reloadMeta();
          useDocTimezone(this.storage.meta);
        }
        this.recalc(changes);
        // Access rules see the rows after the whole write, formulas included; a refusal rolls it all back.
        guard?.finishWrite(
          changes
            .list()
            .map((c) => c.tableId)
            .filter((t) => t.startsWith('_grist_')),
        );
        if (changes.touched('_grist_Tables_column')) {
          this.columnSlots.finish(this.db);
        }
        if (this.listeners.size) {
          for (const change of changes.list()) {
            for (const listener of this.listeners) {
              listener({...change, writeSeq: seq});
            }
          }
        }
        return result;
      }) as T;
    } catch (e) {
      // The transaction rolled back: metadata read during it may describe undone changes, and
      // storage classes found during it may miss values the rollback restored.
      if (this.storage.meta.version !== metaVersion) {
        this.storage.reloadMeta();
      }
      this.storage.classes.clear();
      // The formula engine saw the undone actions: it is loaded again from SQLite when next needed.
      this.storage.formulas = null;
      this.storage.formulasStale = false;
      this.formulasLoaded = false;
      throw e;
    } finally {
      guard?.endWrite();
      this.storage.guard = null;
      this.storage.changes = null;
      this.storage.beforeRows = null;
      this.writer = 'owners';
      restoreZone();
    }
  }

  // -------------------------------------------------------------------------------------------
  // Formulas

  /**
   * Loads the formula engine from the document, if it has formulas and it is not loaded yet. The
   * engine learns dependencies by evaluating formulas, so loading evaluates every formula (what
   * Grist does when it opens a document); the write that loads it stores the cells that differ.
   */
  private loadFormulas(): void {
    if (this.formulasLoaded) {
      return;
    }
    this.storage.formulas = hasFormulas(this.storage.meta) ? this.freshFormulaEngine() : null;
    this.formulasLoaded = true;
  }

  /** An engine loaded from SQLite (in the current transaction), every formula marked for computing. */
  private freshFormulaEngine(): FormulaEngine {
    const fx = loadFormulaEngine(this.db, this.storage.meta);
    this.storage.formulasReadMeta = readsMetadata(this.storage.meta);
    fx.recomputeAll();
    return fx;
  }

  /**
   * After a write's actions: brings every affected formula cell up to date and writes the cells
   * that changed (Grist's recalc at the end of a user action bundle). A document whose first
   * formula appeared in this write gets its engine now, computing every formula.
   */
  private recalc(changes: ChangeSet): void {
    let fx = this.storage.formulas;
    // A formula now reading metadata tables the engine does not hold: load it again with them.
    if (fx && (this.storage.formulasStale || (!this.storage.formulasReadMeta && readsMetadata(this.storage.meta)))) {
      fx = null;
    }
    this.storage.formulasStale = false;
    if (!fx) {
      if (!hasFormulas(this.storage.meta)) {
        return;
      }
      fx = this.freshFormulaEngine();
      this.storage.formulas = fx;
    }
    const now = Date.now();
    if (now - this.clockAt >= CLOCK_MSEC) {
      // Grist refreshes NOW()/TODAY() hourly; here at the first write of each hour.
      fx.invalidateClock();
      this.clockAt = now;
    }
    syncSummaries(this.storage, changes);
    if (!this.marked) {
      // The document's formulas are now kept current by gristlite (docs/decisions.md).
      if (!formulasComputed(this.db)) {
        markFormulasComputed(this.db);
      }
      this.marked = true;
    }
    if (!fx.pending) {
      return;
    }
    writeRecalc(this.storage, changes, fx.recalc());
    // Summaries grouped by a formula column follow the values the recalc gave it.
    if (syncSummaries(this.storage, changes, true) && fx.pending) {
      writeRecalc(this.storage, changes, fx.recalc());
    }
  }

  /**
   * Recomputes every formula of the document and stores the results, as Grist does when it opens
   * a document (imports, and documents whose formulas gristlite never computed: docs/decisions.md).
   * Returns the number of cells that changed.
   */
  recomputeFormulas(): number {
    let cells = 0;
    this.write(() => {
      const fx = this.storage.formulas;
      if (fx) {
        fx.recomputeAll();
        const result = fx.recalc();
        for (const cols of Object.values(result.changes)) {
          for (const c of Object.values(cols)) {
            cells += c.rowIds.length;
          }
        }
        writeRecalc(this.storage, this.storage.changes!, result);
      }
      markFormulasComputed(this.db);
    });
    return cells;
  }

  /**
   * Whether this document needs its formulas computed before it is served: it has formulas and
   * gristlite never computed them (an imported file, or a document from before formulas were
   * computed). docs/decisions.md.
   */
  get needsFormulaRecompute(): boolean {
    return this.isWritable && hasFormulas(this.storage.meta) && !formulasComputed(this.db);
  }

  /** The document's formula engine, loaded if needed (for tests and measurements). @internal */
  formulaEngine(): FormulaEngine | null {
    if (!this.formulasLoaded) {
      this.loadFormulas();
    }
    return this.storage.formulas;
  }

  // -------------------------------------------------------------------------------------------
  // Tables

  private table(tableId: string): TableMeta {
    const t = this.storage.meta.tables.get(tableId);
    if (!t) {
      throw new NotFound(`Table not found "${tableId}"`);
    }
    return t;
  }

  /** A `{tableId}` path parameter: a tableId, or a numeric tableRef of an existing table. */
  resolveTableId(idOrRef: string): string {
    const meta = this.storage.meta;
    if (meta.tables.has(idOrRef)) {
      return idOrRef;
    }
    const ref = parseInt(idOrRef, 10);
    const byRef = ref ? meta.byRef.get(ref) : undefined;
    if (byRef) {
      return byRef.tableId;
    }
    throw new NotFound(`Table not found "${idOrRef}"`);
  }

  /** Every user table, as `GET /tables` lists them. */
  listTables(): TableInfo[] {
    const guard = this.guard;
    const tables = guard
      ? this.storage.meta.userTables.filter((t) => guard.tableVisible(t.tableId))
      : this.storage.meta.userTables;
    return tables.map((t) => ({
      id: t.tableId,
      fields: {
        tableRef: t.tableRef,
        primaryViewId: Number(t.fields.primaryViewId),
        summarySourceTable: Number(t.fields.summarySourceTable),
        onDemand: Boolean(t.fields.onDemand),
        rawViewSectionRef: Number(t.fields.rawViewSectionRef),
        recordCardViewSectionRef: Number(t.fields.recordCardViewSectionRef),
      },
    }));
  }

  /** POST /tables: one AddTable per entry, all in one transaction. */
  addTables(tables: TableSpec[]): Array<{id: string}> {
    checkInput(tables, 'tables');
    return this.write(() =>
      tables.map((t) => {
        const cols = t.columns.map((c) => ({id: c.id, ...pick(c.fields, ADD_TABLE_FIELDS)}));
        return {id: this.storage.addTable(t.id, cols).table_id};
      }),
    );
  }

  /** PATCH /tables: updates of `_grist_Tables` records by tableId (in practice, renames). */
  updateTables(tables: Array<{id: string; fields: Record<string, CellValue>}>): void {
    checkInput(tables, 'tables');
    requireSameFields(tables);
    for (const t of tables) {
      const table = this.storage.meta.tables.get(t.id);
      if (!table || table.isMeta) {
        throw new NotFound(`Table not found "${t.id}"`);
      }
    }
    this.write(() => {
      for (const t of tables) {
        this.updateTableRecord(this.table(t.id).tableRef, t.fields);
      }
    });
  }

  private updateTableRecord(tableRef: number, fields: Record<string, CellValue>): void {
    const table = this.storage.meta.byRef.get(tableRef);
    if (!table) {
      throw new BadRequest(`Invalid row id ${tableRef}`);
    }
    const {tableId, ...rest} = fields;
    if (tableId !== undefined && tableId !== table.tableId) {
      this.storage.renameTable(table, String(tableId));
    }
    const meta = this.table('_grist_Tables');
    for (const k of Object.keys(rest)) {
      this.storage.getColumn(meta, k);
    }
    if (Object.keys(rest).length) {
      const converted: Record<string, CellValue> = {};
      for (const [k, v] of Object.entries(rest)) {
        converted[k] = converterFor(meta.byId.get(k)!.type)(v);
      }
      this.storage.metaUpdate('_grist_Tables', tableRef, converted);
      if ('summarySourceTable' in converted) {
        this.storage.formulasStale = true;
      }
      this.storage.reloadMeta();
    }
  }

  /** Removes a table, its views and its summary tables. */
  removeTable(tableId: string): void {
    const table = this.table(tableId);
    if (table.isMeta) {
      throw new BadRequest(`Cannot remove metadata table ${tableId}`);
    }
    this.write(() => this.storage.removeTables([table.tableRef]));
  }

  // -------------------------------------------------------------------------------------------
  // Columns

  private userTable(tableId: string): TableMeta {
    const t = this.table(tableId);
    if (t.isMeta) {
      throw new BadRequest('getTableCols not available for meta tables');
    }
    return t;
  }

  /** A table's columns, as `GET /columns` lists them (hidden ones with `hidden`). */
  listColumns(tableId: string, options: {hidden?: boolean} = {}): ColumnInfo[] {
    const table = this.userTable(tableId);
    let cols = table.columns.filter((c) => options.hidden || !c.hidden);
    if (this.guard) {
      // A table the user cannot read is as if absent; columns denied outright are left out (Grist).
      if (!this.guard.tableVisible(tableId)) throw new NotFound(`Table not found "${tableId}"`);
      const {hiddenCols} = this.guard.readTable(tableId);
      cols = cols.filter((c) => !hiddenCols.has(c.colId));
    }
    return this.columnSlots.sort(cols).map((c) => columnInfo(c));
  }

  /** POST /columns: AddVisibleColumn per entry. */
  addColumns(tableId: string, columns: ColumnSpec[]): Array<{id: string}> {
    checkInput(columns, 'columns');
    checkColumnCount(columns.length);
    this.userTable(tableId);
    return this.write(() =>
      columns.map((c) => {
        const info = pick(c.fields, ADD_COLUMN_FIELDS);
        return {id: this.storage.addColumn(this.table(tableId), c.id, info, {visible: true}).colId};
      }),
    );
  }

  /** PATCH /columns: one update of `_grist_Tables_column` records (all columns checked first). */
  updateColumns(tableId: string, columns: Array<{id: string; fields: Record<string, CellValue>}>): void {
    checkInput(columns, 'columns');
    requireSameFields(columns);
    refuseDuplicateIds(columns);
    const table = this.userTable(tableId);
    for (const c of columns) {
      if (!table.byId.has(c.id)) {
        throw new NotFound(`Column not found "${c.id}"`);
      }
    }
    this.write(() =>
      this.storage.updateColumns(
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
    const table = this.userTable(tableId);
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
    this.write(() => {
      // One update of all listed columns, as Grist's BulkUpdateRecord (one at a time, 1000 took 99 s).
      if (updates.length) {
        this.storage.updateColumns(this.table(tableId), updates);
      }
      for (const a of adds) {
        this.storage.addColumn(this.table(tableId), a.id, pick(a.fields, ADD_COLUMN_FIELDS), {visible: true});
      }
      if (removals.length) {
        this.storage.removeColumns(removals);
      }
    });
  }

  /** Removes a column, as `DELETE /columns/{colId}`. */
  removeColumn(tableId: string, colId: string): void {
    const table = this.storage.meta.tables.get(tableId);
    const col = table && !table.isMeta ? table.byId.get(colId) : undefined;
    if (!col) {
      throw new NotFound(`Table or column not found "${tableId}.${colId}"`);
    }
    this.write(() => this.storage.removeColumns([col.colRef]));
  }

  // -------------------------------------------------------------------------------------------
  // Reading records

  /** GET /records (and POST /records/list). */
  fetchRecords(tableId: string, q: RecordQuery = {}): {records: ApiRecord[]} {
    const table = this.readableTable(tableId);
    if (this.guard) return {records: this.fetchGuarded(table, q)};
    const cols = table.columns.filter((c) => q.hidden || !c.hidden);
    const {sql, params} = buildRecordQuery(this.db, this.storage.classes, table, columnList(cols), q);
    const rows = this.storage.stmt(sql).raw(true).all(params) as unknown[][];
    const typed = q.cellFormat === 'typed';
    const n = cols.length;
    const ids = cols.map((c) => c.colId);
    const decoders = cols.map((c) => c.decode);
    const formatters = cols.map((c) => (typed ? c.typed : null));
    const records = new Array<ApiRecord>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      const fields: Record<string, CellValue> = {};
      let errors: Record<string, string> | undefined;
      for (let j = 0; j < n; j++) {
        let v = decoders[j](row[j + 1]);
        if (Array.isArray(v)) {
          if (v[0] === 'E') {
            if (!typed) {
              (errors ??= {})[ids[j]] = String(v[1]);
              v = null;
            }
          } else if (formatters[j]) {
            v = formatters[j]!(v);
          }
        } else if (formatters[j]) {
          v = formatters[j]!(v);
        }
        fields[ids[j]] = v;
      }
      records[i] = errors ? {id: row[0] as number, fields, errors} : {id: row[0] as number, fields};
    }
    return {records};
  }

  /**
   * GET /records as the JSON text of its body, exactly `fetchRecords`'s, stringified. SQLite writes
   * the text where it is provably the same (recordsjson.ts), else the records are built in JS. The
   * same read of unchanged data is answered from a cache (readcache.ts) without running it again.
   */
  fetchRecordsJson(tableId: string, q: RecordQuery = {}): string {
    // Answers filtered for one user are neither cached nor shared.
    if (this.guard) return JSON.stringify(this.fetchRecords(tableId, q));
    const key = JSON.stringify([
      tableId,
      q.filter ?? null,
      q.sort ?? null,
      q.limit ?? 0,
      Boolean(q.hidden),
      q.cellFormat ?? 'normal',
    ]);
    return this.readCache.get(this.cacheOwner, this.dataStamp.now().join(','), key, () => {
      const table = this.readableTable(tableId);
      const cols = table.columns.filter((c) => q.hidden || !c.hidden);
      const wholeTable = !(q.limit && q.limit > 0) && (!q.filter || !Object.keys(q.filter).length);
      const recordSql = recordJsonSql(table, cols, q.cellFormat === 'typed', this.storage.classes, wholeTable);
      if (recordSql === null) {
        this.recordsJsonPaths.js++;
        return JSON.stringify(this.fetchRecords(tableId, q));
      }
      this.recordsJsonPaths.sql++;
      const {sql, params} = buildRecordQuery(this.db, this.storage.classes, table, recordSql, q);
      const records = this.storage.stmt(sql).pluck().all(params) as string[];
      return `{"records":[${records.join(',')}]}`;
    });
  }

  /** GET /data: column-oriented, always with every column; errors stay raw. */
  fetchColumns(tableId: string, q: RecordQuery = {}): Record<string, CellValue[]> {
    const table = this.readableTable(tableId);
    if (this.guard) {
      const records = this.fetchGuarded(table, {...q, hidden: true});
      const visible = this.guard.readTable(table.tableId).hiddenCols;
      const out: Record<string, CellValue[]> = {id: records.map((r) => r.id)};
      for (const c of table.columns) {
        if (!visible.has(c.colId)) out[c.colId] = records.map((r) => r.fields[c.colId] ?? null);
      }
      return out;
    }
    const cols = table.columns;
    const {sql, params} = buildRecordQuery(this.db, this.storage.classes, table, columnList(cols), q);
    const rows = this.storage.stmt(sql).raw(true).all(params) as unknown[][];
    const typed = q.cellFormat === 'typed';
    const out: Record<string, CellValue[]> = {id: rows.map((r) => r[0] as number)};
    cols.forEach((c, j) => {
      const fmt = typed ? c.typed : null;
      out[c.colId] = rows.map((r) => {
        const v = c.decode(r[j + 1]);
        return fmt && !(Array.isArray(v) && v[0] === 'E') ? fmt(v) : v;
      });
    });
    return out;
  }

  /**
   * A read under access rules: the table refused (403) or its rows read whole, filtered row by row
   * where rules depend on rows (cells censored as `["C"]`, denied columns left out), and `limit`
   * applied after filtering, as Grist filters before limiting.
   */
  private fetchGuarded(table: TableMeta, q: RecordQuery): ApiRecord[] {
    const guard = this.guard!;
    if (table.tableId.startsWith('_grist_ACL') && !guard.canReadRules()) return [];
    const metaRow = table.isMeta ? this.metaRowFilter(table.tableId, guard) : null;
    const filter = guard.readTable(table.tableId);
    const all = table.columns;
    const shown = all.filter((c) => (q.hidden || !c.hidden) && !filter.hiddenCols.has(c.colId));
    const query = filter.row || metaRow ? {...q, limit: undefined} : q;
    const {sql, params} = buildRecordQuery(this.db, this.storage.classes, table, columnList(all), query);
    const rows = this.storage.stmt(sql).raw(true).all(params) as unknown[][];
    const typed = q.cellFormat === 'typed';
    const out: ApiRecord[] = [];
    const limit = (filter.row || metaRow) && q.limit && q.limit > 0 ? q.limit : Infinity;
    for (const row of rows) {
      if (out.length >= limit) break;
      const id = row[0] as number;
      const values: RowValues & {id: number} = {id};
      for (let j = 0; j < all.length; j++) values[all[j].colId] = all[j].decode(row[j + 1]);
      values.id = id;
      if (metaRow && !metaRow(values)) continue;
      const censored = filter.row ? filter.row(values) : null;
      if (censored === null && filter.row) continue;
      const fields: Record<string, CellValue> = {};
      let errors: Record<string, string> | undefined;
      for (const c of shown) {
        let v = values[c.colId];
        if (censored?.has(c.colId)) v = ['C'];
        else if (Array.isArray(v) && v[0] === 'E' && !typed) {
          (errors ??= {})[c.colId] = String(v[1]);
          v = null;
        } else if (typed && !(Array.isArray(v) && v[0] === 'E')) v = c.typed ? c.typed(v) : v;
        fields[c.colId] = v;
      }
      out.push(errors ? {id, fields, errors} : {id, fields});
    }
    return out;
  }

  /**
   * Rows of metadata tables that describe what the user cannot see are left out (Grist censors
   * them): tables they cannot read, columns denied to them, and cell comments outside what they
   * can read in full. Null when the table needs no such filter.
   */
  private metaRowFilter(tableId: string, guard: DocGuard): ((row: RowValues) => boolean) | null {
    const meta = this.storage.meta;
    const tableVisible = (ref: CellValue) => {
      const t = meta.byRef.get(Number(ref));
      return !t || guard.tableVisible(t.tableId);
    };
    const colVisible = (ref: CellValue, fully: boolean) => {
      const found = meta.colsByRef.get(Number(ref));
      if (!found) return true;
      if (!guard.tableVisible(found.table.tableId)) return false;
      const f = guard.readTable(found.table.tableId);
      return !f.hiddenCols.has(found.col.colId) && (!fully || !f.row);
    };
    switch (tableId) {
      case '_grist_Tables':
        return (row) => guard.tableVisible(String(row.tableId));
      case '_grist_Tables_column':
        return (row) => tableVisible(row.parentId) && colVisible(row.id, false);
      case '_grist_Cells':
        return (row) => tableVisible(row.tableRef) && colVisible(row.colRef, true);
      case '_grist_Attachments': {
        const readable = this.readableAttachments();
        return readable ? (row) => readable.has(Number(row.id)) : null;
      }
      default:
        return null;
    }
  }

  private readableTable(tableId: string): TableMeta {
    if (tableId.startsWith('_gristsys_')) {
      throw new NotFound(`Table not found "${tableId}"`);
    }
    return this.table(tableId);
  }

  // -------------------------------------------------------------------------------------------
  // Writing records

  private opts(o: Partial<WriteOptions> | undefined): WriteOptions {
    return {parse: o?.parse ?? true};
  }

  /** POST /records: one BulkAddRecord over the union of the records' keys (missing ones null). */
  addRecords(tableId: string, records: Array<Record<string, CellValue>>, options?: WriteAs): number[] {
    checkInput(records, 'records');
    const colValues = toColumns(records);
    return this.write(
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
    const table = this.table(tableId);
    const colValues = new Map(
      keys
        .filter((k) => k !== 'id')
        .map((k) => [k, padTo(columnArray(data, k), count, cellDefaultFor(table.byId.get(k)?.type))]),
    );
    return this.write(
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
    this.write(
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
    this.write(() => this.bulkUpdate(tableId, ids, colValues, this.opts(options)), options?.role);
  }

  /** POST /records/delete, /data/delete: missing ids are ignored. */
  removeRecords(tableId: string, ids: unknown[], options?: WriteAs): void {
    checkInput(ids, 'row ids');
    this.write(() => this.bulkRemove(tableId, ids as CellValue[]), options?.role);
  }

  private bulkAdd(
    tableId: string,
    rowIds: Array<number | null>,
    colValues: Map<string, CellValue[]>,
    opts: WriteOptions,
  ): number[] {
    const table = this.table(tableId);
    if (table.isMeta) {
      checkMetaWrite(tableId, 'add', colValues.keys(), this.writer);
      if (tableId === '_grist_Tables' || tableId === '_grist_Tables_column') {
        throw new BadRequest(`Adding records to ${tableId} is not supported; use AddTable or AddColumn`);
      }
      for (const k of colValues.keys()) {
        this.storage.getColumn(table, k);
      }
      const rows = rowIds.map((_, i) => {
        const row: Record<string, CellValue> = {};
        for (const [k, vals] of colValues) {
          row[k] = converterFor(table.byId.get(k)!.type)(vals[i]);
        }
        return row;
      });
      return this.storage.metaAdd(tableId, rows);
    }
    return this.storage.addRecords(table, rowIds, colValues, opts);
  }

  private bulkUpdate(tableId: string, rowIds: number[], colValues: Map<string, CellValue[]>, opts: WriteOptions): void {
    const table = this.table(tableId);
    if (!table.isMeta) {
      this.storage.updateRecords(table, rowIds, colValues, opts);
      return;
    }
    checkMetaWrite(tableId, 'update', colValues.keys(), this.writer);
    for (const k of colValues.keys()) {
      if (k !== 'id') {
        this.storage.getColumn(table, k);
      }
    }
    const rows = new Map(this.storage.metaRows(tableId).map((r) => [Number(r.id), r]));
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
        this.updateTableRecord(id, values);
      } else if (tableId === '_grist_Tables_column') {
        const found = this.storage.meta.colsByRef.get(id);
        if (found) {
          this.storage.updateColumns(found.table, [{colId: found.col.colId, values}]);
        }
      } else {
        const converted: Record<string, CellValue> = {};
        for (const [k, v] of Object.entries(values)) {
          converted[k] = converterFor(table.byId.get(k)!.type)(v);
        }
        this.storage.metaUpdate(tableId, id, converted);
      }
    });
  }

  private bulkRemove(tableId: string, rowIds: CellValue[]): void {
    const table = this.table(tableId);
    if (!table.isMeta) {
      this.storage.removeRecords(table, rowIds);
      return;
    }
    checkMetaWrite(tableId, 'remove', [], this.writer);
    if (rowIds.some((id) => typeof id !== 'number' || !Number.isInteger(id))) {
      throw engineError('TypeError', 'row ids must be integers');
    }
    const existing = new Set(this.storage.metaRows(tableId).map((r) => Number(r.id)));
    const ids = (rowIds as number[]).filter((id) => existing.has(id));
    switch (tableId) {
      case '_grist_Tables':
        this.storage.removeTables(ids);
        break;
      case '_grist_Tables_column':
        this.storage.removeColumns(ids);
        break;
      case '_grist_Views':
        removeViews(this.storage, ids);
        break;
      case '_grist_Views_section':
        removeSections(this.storage, ids);
        break;
      default:
        this.storage.metaRemove(tableId, ids);
        // Attachments cells refer to _grist_Attachments rows.
        this.storage.clearReferencesTo(tableId, ids);
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
    this.write(() => {
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

  private bulkAddOrUpdate(
    tableId: string,
    records: UpsertRecord[],
    options: UpsertOptions,
  ): {recordIds: Array<number[] | undefined>; added: number[]; updated: number[][]} {
    return bulkAddOrUpdate(this.upsertTarget, tableId, records, options);
  }

  /** What add-or-update uses (upsert.ts), bound to this document. */
  private readonly upsertTarget: UpsertTarget = ((doc: GristDoc): UpsertTarget => ({
    get storage() {
      return doc.storage;
    },
    get db() {
      return doc.db;
    },
    table: (t) => doc.table(t),
    opts: (o) => doc.opts(o),
  }))(this);

  // -------------------------------------------------------------------------------------------
  // User actions

  /** POST /apply: a bundle of user actions, applied atomically. */
  applyUserActions(actions: unknown[], options?: WriteAs): ApplyResult {
    if (!Array.isArray(actions)) {
      throw new BadRequest('Invalid payload: expected an array of user actions');
    }
    checkInput(actions, 'user actions');
    checkSchemaActionCount(actions);
    const opts = this.opts(options);
    // Everything the answer needs is built inside the transaction: once it commits, nothing that
    // follows can throw (issue 11: a write committed, then its action record failed with a 500).
    const result = this.write(() => {
      const placeholders = new Placeholders();
      const retValues = actions.map((given) => {
        const a = placeholders.rewrite(given, this.storage.meta);
        const ret = this.applyAction(a, opts);
        placeholders.record(a, ret);
        // The document's first formula appeared: later actions of the bundle reach its engine
        // (a trigger formula must see the updates and additions that follow it).
        if (!this.storage.formulas && hasFormulas(this.storage.meta)) {
          this.storage.formulas = this.freshFormulaEngine();
        }
        return ret;
      });
      const actionNum = this.actionNum + 1;
      const actionHash = createHash('sha256')
        .update(JSON.stringify([actionNum, actions]))
        .digest('hex');
      return {actionNum, actionHash, retValues, isModification: !this.storage.changes!.isEmpty};
    }, options?.role);
    this.actionNum = result.actionNum;
    return result;
  }

  private actionTable(tableId: unknown): string {
    if (typeof tableId !== 'string' || !this.storage.meta.tables.has(tableId)) {
      throw engineError('KeyError', `'${shownValue(tableId)}'`);
    }
    return tableId;
  }

  private applyAction(action: unknown, opts: WriteOptions): unknown {
    if (!Array.isArray(action) || typeof action[0] !== 'string') {
      throw new BadRequest(`Invalid user action: ${JSON.stringify(action)}`);
    }
    const [name, ...args] = action as [string, ...unknown[]];
    return userAction(name)(actionContext(name, opts, this.actionTarget), args);
  }
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

/** The result columns of a record read: id, then `cols`. */
function columnList(cols: ColumnMeta[]): string {
  return `"id"${cols.map((c) => ', ' + quoteIdent(c.colId)).join('')}`;
}

function columnInfo(c: ColumnMeta): ColumnInfo {
  const fields: Record<string, CellValue> = {colRef: c.colRef};
  for (const k of COLUMN_FIELD_ORDER) {
    fields[k] = c.fields[k];
  }
  return {id: c.colId, fields};
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
