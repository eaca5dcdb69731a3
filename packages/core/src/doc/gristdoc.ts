/**
 * GristDoc: one open `.grist` document. Synchronous (better-sqlite3, WAL mode); every public write
 * runs in one SQLite transaction and reports what it changed to `onChange` listeners inside that
 * transaction. Formulas are computed by the formula engine (@gristlite/formula's FormulaEngine): every action of a
 * write is mirrored to it, then it recalculates, and the cells that changed are written in the same
 * transaction (docs/formulas.md).
 *
 * One thing: the document's one write transaction and what runs inside it, in order (input
 * checks, metadata rules, storage, formulas, the access-rules stage, change listeners, history,
 * COMMIT), with the public methods that open it. The stages are parts of their own (storage*.ts,
 * recalc.ts, reads.ts, schemaops.ts, recordwrites.ts, history/); this file keeps their order.
 */
import Database from 'better-sqlite3';
import {createHash} from 'node:crypto';
import {BadRequest, engineError, NotFound, shownValue} from '../base/index.js';
import {createDocFile, type CreateDocOptions} from './create.js';
import {ChangeSet, DocStorage, type WriteActor, type WriteOptions} from './storage.js';
import {DataStamp} from './colstats.js';
import {
  formulasComputed,
  hasFormulas,
  markFormulasComputed,
  registerCellFunction,
  useDocTimezone,
  useDocUrl,
  writeRecalc,
} from './formulas.js';
import type {BudgetSettings} from '@gristlite/formula';
import type {FormulaEngine} from '@gristlite/formula';
import {removeUnusedDisplayCols} from './display.js';
import {removeUnusedSummaries} from './summary-actions.js';
import {MetaRowSlots} from './colorder.js';
import {ReadCache} from './readcache.js';
import {actionContext, type ActionTarget, userAction} from './useractions.js';
import {checkInput, checkSchemaActionCount} from './input.js';
import type {DocGuard, RowValues, WriteRows} from './guard.js';
import {Placeholders} from './placeholders.js';
import type {StreamOptions} from './stream.js';
import type {TableAccess} from './rowscope.js';
import {DocReads, type ReadSource} from './reads.js';
import {DocSchema, type SchemaSource} from './schemaops.js';
import {DocRecordWrites, type RecordSource} from './recordwrites.js';
import {DocRecalc, type RecalcSource} from './recalc.js';
import {refreshRules} from '../access/rules/write.js';
import {type AggregateQuery, type AggregateRecord, DEFAULT_AGGREGATE_MAX_GROUPS} from './aggregate/index.js';
import {
  DEFAULT_WHERE_MAX_CHARS,
  DEFAULT_WHERE_MAX_MSEC,
  DEFAULT_WHERE_MAX_ROWS,
  type WhereSettings,
  WhereState,
} from './where/index.js';
import {
  HISTORY_COLUMNAR_ROWS,
  HistoryRecorder,
  tableHistory,
  type HistoryEntry,
  type HistoryPosition,
  type HistoryQuery,
  type HistorySettings,
  type RecordedAction,
} from './history/index.js';

export {checkInput, MAX_INPUT_DEPTH, MAX_SCHEMA_ACTIONS_PER_APPLY} from './input.js';
import type {ColumnMeta, TableMeta} from './meta.js';
import {NATURAL_KEY_FN, naturalKey, quoteIdent} from './query.js';
import {isGristDocument, needsUpgrade, readVersions, upgradeDocument} from './migrations/index.js';
import {SCHEMA_VERSION} from './schema.js';
import type {CellValue} from './types.js';
import type {WriterRole} from './metarules.js';

export type {TableChange} from './storage.js';
import type {TableChange} from './changes.js';
import type {
  ApiRecord,
  ApplyResult,
  BeforeRowsListener,
  ChangeListener,
  ColumnInfo,
  ColumnSpec,
  OpenOptions,
  PageEnd,
  RecordQuery,
  TableInfo,
  TableSpec,
  UpsertOptions,
  UpsertRecord,
  UpsertResult,
  WriteAs,
  WriteListener,
} from './api-types.js';

/** The read cache of a document opened without one (the engine passes its own, of 64 MB). */
const OWN_READ_CACHE_BYTES = 8 * 1024 * 1024;

/**
 * The document's URL that formulas see (SELF_HYPERLINK): the URL, a function that makes it (called
 * only when a write computes formulas), or null when unknown.
 */
export type DocUrl = string | null | (() => string | null);

/** One `.grist` document, opened on one better-sqlite3 connection: tables, columns, records, user actions and formulas, each write one SQLite transaction. Synchronous. */
export class GristDoc {
  private readonly storage: DocStorage;
  /** The operations user actions run on (useractions.ts), bound to this document. */
  private readonly actionTarget: ActionTarget = ((doc: GristDoc): ActionTarget => ({
    get storage() {
      return doc.storage;
    },
    actionTable: (t) => doc.actionTable(t),
    bulkAdd: (...x) => doc.records.bulkAdd(...x),
    bulkUpdate: (...x) => doc.records.bulkUpdate(...x),
    bulkRemove: (...x) => doc.records.bulkRemove(...x),
    bulkAddOrUpdate: (...x) => doc.records.bulkAddOrUpdate(...x),
  }))(this);
  /**
   * What the pipelines below see of this document: one view, read through getters (the fields are
   * set in the constructor, after these initialisers run).
   */
  private readonly parts: ReadSource & SchemaSource & RecordSource & RecalcSource = ((doc: GristDoc) => ({
    get storage() {
      return doc.storage;
    },
    get db() {
      return doc.db;
    },
    get path() {
      return doc.path;
    },
    get guard() {
      return doc.guard;
    },
    get writer() {
      return doc.writer;
    },
    get readCache() {
      return doc.readCache;
    },
    get cacheOwner() {
      return doc.cacheOwner;
    },
    get dataStamp() {
      return doc.dataStamp;
    },
    get recordsJsonPaths() {
      return doc.recordsJsonPaths;
    },
    get formulaBudget() {
      return doc.formulaBudget;
    },
    get where() {
      return doc.whereState;
    },
    get whereSettings() {
      return doc.whereSettings;
    },
    table: (t: string) => doc.table(t),
    userTable: (t: string) => doc.userTable(t),
    columnOrder: (cols: ColumnMeta[]) => doc.columnSlots.sort(cols, (c) => c.colRef),
    tableOrder: <T extends {tableRef: number}>(tables: T[]) => doc.tableSlots.sort(tables, (t) => t.tableRef),
    write: <T>(fn: () => T, role?: WriterRole) => doc.write(fn, role),
    updateTableRecord: (ref: number, fields: Record<string, CellValue>) => doc.schema.updateTableRecord(ref, fields),
  }))(this);
  /** The read pipeline (reads.ts). */
  private readonly reads = new DocReads(this.parts);
  /** Table and column operations (schemaops.ts). */
  private readonly schema = new DocSchema(this.parts);
  /** Record writes and add-or-update (recordwrites.ts). */
  private readonly records = new DocRecordWrites(this.parts);
  /** The formula engine and recalculation inside writes (recalc.ts). */
  private readonly recalcs = new DocRecalc(this.parts);
  private readonly listeners = new Set<ChangeListener>();
  private readonly beforeListeners = new Set<BeforeRowsListener>();
  private readonly writeListeners = new Set<WriteListener>();
  private writeSeq = 0;
  /** Grist's in-memory order of column records, which `GET /columns` follows (colorder.ts). */
  private readonly columnSlots = new MetaRowSlots('_grist_Tables_column');
  /** Grist's in-memory order of table records, which `GET /tables` follows (colorder.ts). */
  private readonly tableSlots = new MetaRowSlots('_grist_Tables');
  private actionNum: number;
  /** The role of the current write's caller (metadata write rules, metarules.ts). */
  private writer: WriterRole = 'owners';
  /**
   * Whether the current write changes column definitions the way Grist checks before its engine
   * runs (ModifyColumn and kin, direct writes to `_grist_Tables_column`): a refusal then says
   * "full structure" (access rules).
   */
  private formulaStructure = false;
  /** Whether a part of the current write was one that may change formulas (see above). */
  private formulaStructureSeen = false;
  /** Access rules of the current call's user (`as`), or null: reads unfiltered, writes unchecked. */
  private guard: DocGuard | null = null;
  /** Who the current call acts for (`as`): what change listeners are told made a write. */
  private actor: WriteActor | null = null;
  /** The document's URL for formulas the current call computes (`as`): SELF_HYPERLINK's value. */
  private docUrl: DocUrl = null;
  /** Runs a function in one SQLite transaction (made once: better-sqlite3 builds it per call). */
  private readonly inTransaction: (fn: () => unknown) => unknown;
  private readonly dataStamp: DataStamp;
  /** This document's key in the read cache. */
  private readonly cacheOwner: string;
  private closed = false;
  /** Parsed `where` conditions and their bounds (doc/where/). */
  private readonly whereState = new WhereState();
  private readonly whereSettings: WhereSettings;
  /**
   * Called inside each write's transaction after everything else, before COMMIT (the engine keeps
   * the request's Idempotency-Key there: idempotency.ts). @internal
   */
  beforeCommit: ((db: Database.Database) => void) | null = null;
  /**
   * Recovery mode (`POST /recover`): writes to the rule tables are not checked for a rule set
   * Grist accepts, so an owner may repair broken rules step by step (GranularAccess.ts:637-640).
   */
  recoveryMode = false;
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
      return new GristDoc(
        path,
        db,
        options.readCache ?? new ReadCache(OWN_READ_CACHE_BYTES),
        options.formulaBudget,
        options.where,
        options.history,
      );
    } catch (e) {
      db.close();
      throw e;
    }
  }

  /** Creates a new document (as Grist does: Table1 with columns A, B, C) and opens it. */
  static create(path: string, options: CreateDocOptions & {history?: HistorySettings} = {}): GristDoc {
    const {history, ...doc} = options;
    createDocFile(path, doc);
    return GristDoc.open(path, {history});
  }

  private constructor(
    readonly path: string,
    readonly db: Database.Database,
    private readonly readCache: ReadCache,
    private readonly formulaBudget: Partial<BudgetSettings> = {},
    where: Partial<WhereSettings> = {},
    history: HistorySettings = {},
  ) {
    this.whereSettings = {
      maxChars: DEFAULT_WHERE_MAX_CHARS,
      maxRows: DEFAULT_WHERE_MAX_ROWS,
      maxGroups: DEFAULT_AGGREGATE_MAX_GROUPS,
      maxMs: DEFAULT_WHERE_MAX_MSEC,
      ...where,
    };
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
    this.history = new HistoryRecorder(db, history);
  }

  /** Records each write in the action history (recorder.ts), unless turned off by its settings. */
  private readonly history: HistoryRecorder;
  /** What the last committed write recorded (null when it recorded nothing). */
  private lastRecorded: RecordedAction | null = null;
  /** Whether the current write is recorded even when it changed nothing (a bundle of user actions, as Grist). */
  private recordEmpty = false;

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

  /**
   * Registers a listener called once per write, inside its transaction after everything else
   * (change feeds read the new values there); what it returns runs after the COMMIT.
   */
  onWrite(listener: WriteListener): () => void {
    this.writeListeners.add(listener);
    return () => {
      this.writeListeners.delete(listener);
    };
  }

  // -------------------------------------------------------------------------------------------
  // Access rules

  /**
   * This document as one user sees it under access rules: every call runs with `guard`, so reads
   * are filtered (tables, columns, rows, cells) and writes are checked inside their transaction.
   * `actor` names who acts, for change listeners (`onChange`, `onWrite`); `context.docUrl` is
   * the document's URL as the caller reached it (or what makes it, called only by a write), which
   * formulas computed by its writes see (SELF_HYPERLINK; without it, None). Without any, the
   * document itself.
   */
  as(guard: DocGuard | null, actor: WriteActor | null = null, context: {docUrl?: DocUrl} = {}): GristDoc {
    const docUrl = context.docUrl ?? null;
    if (!guard && !actor && !docUrl) return this;
    return new Proxy(this, {
      get: (target, key) => {
        const v = Reflect.get(target, key, target);
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => target.withGuard(guard, actor, docUrl, () => v.apply(target, args));
      },
    });
  }

  /** A record write: to column definitions it is one that may change formulas. */
  private onTable<T>(tableId: string, fn: () => T): T {
    return FORMULA_TABLES.has(tableId) ? this.asFormulaStructure(fn) : fn();
  }

  /** Runs a write marked as one that may change formulas (see `formulaStructure`). */
  private asFormulaStructure<T>(fn: () => T): T {
    const outer = this.formulaStructure;
    this.formulaStructure = true;
    // Inside a larger write (a transaction), the whole write is one that may change formulas.
    if (this.storage.changes) this.formulaStructureSeen = true;
    try {
      return fn();
    } finally {
      this.formulaStructure = outer;
    }
  }

  private withGuard<T>(guard: DocGuard | null, actor: WriteActor | null, docUrl: DocUrl, fn: () => T): T {
    const outer = this.guard;
    const outerActor = this.actor;
    const outerUrl = this.docUrl;
    this.guard = guard;
    this.actor = actor;
    this.docUrl = docUrl;
    try {
      return fn();
    } finally {
      this.guard = outer;
      this.actor = outerActor;
      this.docUrl = outerUrl;
    }
  }

  /** What access rules read during a write (guard.ts). */
  private readonly writeRows: WriteRows = {
    read: (tableId, ids, cols) => this.reads.readRows(tableId, ids, cols),
    column: (tableId, colId) => {
      const c = this.storage.meta.tables.get(tableId)?.byId.get(colId);
      return c ? {type: c.type, isFormula: c.isFormula} : undefined;
    },
    anyOutside: (tableId, ids, cond) => {
      const stmt = this.storage.stmt(
        `SELECT 1 FROM ${quoteIdent(tableId)} WHERE id IN (SELECT value FROM json_each(?)) AND NOT (${cond.sql}) LIMIT 1`,
      );
      return stmt.get(JSON.stringify(ids), ...cond.params) !== undefined;
    },
  };

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
    const history = this.history.enabled ? this.history : null;
    history?.reset();
    this.storage.afterInsert = history
      ? (tableId, ids, cols, values) => history.insertedRows(this.storage.meta, tableId, ids, cols, values)
      : null;
    this.storage.beforeDrop = history
      ? (tableId, colIds) => history.dropping(this.storage.meta, tableId, colIds)
      : null;
    this.storage.afterAddColumn = history ? (tableId, colRef) => history.columnAdded(tableId, colRef) : null;
    this.storage.afterCells = history
      ? {
          minRows: HISTORY_COLUMNAR_ROWS,
          written: (tableId, colId, ids, cells) =>
            history.handed.set(this.storage.meta.version, tableId, colId, ids, cells),
        }
      : null;
    this.lastRecorded = null;
    this.storage.beforeRows =
      this.beforeListeners.size || history
        ? (tableId, rowIds, colIds, cells) => {
            history?.capture(this.storage.meta, tableId, rowIds, colIds, cells);
            // Listeners hear of user rows only (metadata rows are captured for the history alone).
            if (tableId.startsWith('_grist')) return;
            for (const l of this.beforeListeners) {
              l(tableId, rowIds, seq, this.writeRows.read);
            }
          }
        : null;
    const metaVersion = this.storage.meta.version;
    this.writer = role;
    const guard = this.guard;
    if (guard) {
      guard.beginWrite(this.writeRows);
      this.storage.guard = guard;
    }
    const restoreZone = useDocTimezone(this.storage.meta);
    const restoreUrl = useDocUrl(typeof this.docUrl === 'function' ? this.docUrl() : this.docUrl);
    let afterCommit: Array<() => void> | null = null;
    let committed: T;
    try {
      committed = this.inTransaction(() => {
        this.columnSlots.start(this.db);
        this.tableSlots.start(this.db);
        this.recalcs.load();
        const result = fn();
        // Grist's auto-removal of summary tables no section shows any more.
        if (changes.touched('_grist_Views_section')) {
          removeUnusedSummaries(this.storage);
        }
        // Grist's auto-removal of display helpers left unused by this write's schema changes.
        if (changes.touched('_grist_Tables_column') || changes.touched('_grist_Views_section_field')) {
          removeUnusedDisplayCols(this.storage);
        }
        // Rules written: their parsed form as Grist writes it, and a rule set Grist accepts.
        if (changes.touched('_grist_ACLRules') || changes.touched('_grist_ACLResources')) {
          const rules = changes.list().find((c) => c.tableId === '_grist_ACLRules');
          refreshRules(this.db, rules ? [...rules.added, ...rules.updated] : [], {check: !this.recoveryMode});
        }
        if (changes.touched('_grist_DocInfo')) {
          this.storage.reloadMeta();
          useDocTimezone(this.storage.meta);
        }
        this.recalcs.recalc(changes);
        // Access rules see the rows after the whole write, formulas included; a refusal rolls it all back.
        guard?.finishWrite(
          changes.directTableIds().filter((t) => t.startsWith('_grist_')),
          this.formulaStructure || this.formulaStructureSeen,
        );
        if (changes.touched('_grist_Tables_column')) {
          this.columnSlots.finish(this.db);
        }
        if (changes.touched('_grist_Tables')) {
          this.tableSlots.finish(this.db);
        }
        const actor = this.actor;
        let list: TableChange[] | null = null;
        if (this.listeners.size || this.writeListeners.size) {
          list = changes.list();
          for (const change of list) {
            for (const listener of this.listeners) {
              listener({...change, writeSeq: seq, actor});
            }
          }
          for (const listener of this.writeListeners) {
            const then = listener({writeSeq: seq, actor, changes: list, read: this.writeRows.read});
            if (then) (afterCommit ??= []).push(then);
          }
        }
        // Add-or-update's kept indexes follow the write, reading its rows before the commit.
        if (this.storage.keyIndexes.active) {
          this.storage.keyIndexes.follow(list ?? changes.list(), this.storage.meta.tables);
        }
        // The write's action bundle, in its own transaction (Grist's recordNextShared).
        if (history) {
          const all = list ?? changes.list();
          this.lastRecorded = this.storage.classes.aside(
            () => history.record(this.storage.meta, all, actor, Date.now(), this.recordEmpty),
            () => history.rowsChanged,
          );
        }
        // Last, so that nothing after it can undo the write: the request's Idempotency-Key goes with it.
        this.beforeCommit?.(this.db);
        return result;
      }) as T;
    } catch (e) {
      // The transaction rolled back: metadata read during it may describe undone changes, and
      // storage classes found during it may miss values the rollback restored.
      if (this.storage.meta.version !== metaVersion) {
        this.storage.reloadMeta();
      }
      this.storage.classes.clear();
      this.storage.keyIndexes.clear();
      // The formula engine saw the undone actions: it is loaded again from SQLite when next needed.
      this.storage.formulas = null;
      this.storage.formulasStale = false;
      this.recalcs.forget();
      this.lastRecorded = null;
      throw e;
    } finally {
      history?.reset();
      this.recordEmpty = false;
      guard?.endWrite();
      this.storage.guard = null;
      this.storage.changes = null;
      this.storage.beforeRows = null;
      this.storage.afterInsert = null;
      this.storage.beforeDrop = null;
      this.storage.afterAddColumn = null;
      this.storage.afterCells = null;
      this.writer = 'owners';
      this.formulaStructureSeen = false;
      restoreZone();
      restoreUrl();
    }
    // After the COMMIT and outside the write: a listener failing here cannot undo a write that is
    // already durable, and anything it reads sees the document as committed.
    for (const then of (afterCommit as Array<() => void> | null) ?? []) {
      try {
        then();
      } catch {
        // A feed ends a subscriber it failed to serve; the write stands.
      }
    }
    return committed;
  }

  /**
   * Recomputes every formula of the document and stores the results, as Grist does when it opens
   * a document (imports, and documents whose formulas gristlite never computed: docs/decisions.md).
   * Returns the number of cells that changed.
   */
  recomputeFormulas(): number {
    let cells = 0;
    this.write(() => {
      // Recorded as Grist records its Calculate action when a document opens (a system action).
      this.history.userActions = [['Calculate']];
      this.history.system = true;
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

  /**
   * A token that changes whenever the document's data or schema may have changed: this open
   * connection's identity and its SQLite change counters (rows changed here, changes by other
   * connections, schema version). Equal tokens mean identical data; a reopened document gets new
   * ones. For HTTP revalidation (ETags).
   */
  dataVersion(): string {
    return `${this.cacheOwner}.${this.dataStamp.now().join('.')}`;
  }

  /**
   * `dataVersion()` for HTTP revalidation: this connection's writes show at once, another
   * connection's commit at most one turn of the event loop late (colstats.ts `DataStamp.thisTurn`).
   */
  revalidationVersion(): string {
    return `${this.cacheOwner}.${this.dataStamp.thisTurn().join('.')}`;
  }

  /** The document's formula engine, loaded if needed (for tests and measurements). @internal */
  formulaEngine(): FormulaEngine | null {
    if (!this.recalcs.isLoaded) {
      this.recalcs.load();
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

  /** POST /tables: one AddTable per entry, all in one transaction. */
  addTables(tables: TableSpec[]): Array<{id: string}> {
    return this.schema.addTables(tables);
  }

  /** PATCH /tables: table renames and fields (one write). */
  updateTables(tables: Array<{id: string; fields: Record<string, CellValue>}>): void {
    this.schema.updateTables(tables);
  }

  /** Removes a table, its views and its summary tables. */
  removeTable(tableId: string): void {
    this.schema.removeTable(tableId);
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

  /** POST /columns: AddVisibleColumn per entry. */
  addColumns(tableId: string, columns: ColumnSpec[]): Array<{id: string}> {
    return this.schema.addColumns(tableId, columns);
  }

  /** PATCH /columns: column fields (one write). */
  updateColumns(tableId: string, columns: Array<{id: string; fields: Record<string, CellValue>}>): void {
    this.asFormulaStructure(() => this.schema.updateColumns(tableId, columns));
  }

  /** PUT /columns: updates, then adds, then (with replaceall) removal of the unlisted columns. */
  replaceColumns(
    tableId: string,
    columns: Array<{id: string; fields?: Record<string, CellValue>}>,
    options: {noadd?: boolean; noupdate?: boolean; replaceall?: boolean} = {},
  ): void {
    this.asFormulaStructure(() => this.schema.replaceColumns(tableId, columns, options));
  }

  /** Removes a column, as `DELETE /columns/{colId}`. */
  removeColumn(tableId: string, colId: string): void {
    this.schema.removeColumn(tableId, colId);
  }

  // -------------------------------------------------------------------------------------------
  // Reading (reads.ts)

  /** Every user table, as `GET /tables` lists them. */
  listTables(): TableInfo[] {
    return this.reads.listTables();
  }

  /** A table's columns, as `GET /columns` lists them (hidden ones with `hidden`). */
  listColumns(tableId: string, options: {hidden?: boolean} = {}): ColumnInfo[] {
    return this.reads.listColumns(tableId, options);
  }

  /** GET /records (and POST /records/list). */
  fetchRecords(tableId: string, q: RecordQuery = {}, page?: PageEnd): {records: ApiRecord[]} {
    return this.reads.fetchRecords(tableId, q, page);
  }

  /** GET /records as the JSON text of its body (see `DocReads.fetchRecordsJson`). */
  fetchRecordsJson(tableId: string, q: RecordQuery = {}, page?: PageEnd): string {
    return this.reads.fetchRecordsJson(tableId, q, page);
  }

  /**
   * GET /records: `fetchRecordsJson`'s text, or for a large answer the same bytes as a stream
   * read from one snapshot (see `DocReads.streamRecordsJson`).
   */
  streamRecordsJson(
    tableId: string,
    q: RecordQuery = {},
    page?: PageEnd,
    opts?: StreamOptions,
  ): string | AsyncIterable<Uint8Array> {
    return this.reads.streamRecordsJson(tableId, q, page, opts);
  }

  /** GET /data as JSON text, or streamed column by column when large (`DocReads.streamColumnsJson`). */
  streamColumnsJson(
    tableId: string,
    q: RecordQuery = {},
    page?: PageEnd,
    opts?: StreamOptions,
  ): string | AsyncIterable<Uint8Array> {
    return this.reads.streamColumnsJson(tableId, q, page, opts);
  }

  /** GET /data: column-oriented, always with every column; errors stay raw. */
  fetchColumns(tableId: string, q: RecordQuery = {}, page?: PageEnd): Record<string, CellValue[]> {
    return this.reads.fetchColumns(tableId, q, page);
  }

  /**
   * How many rows `GET /records` would return for `q` (its filter and `where`; beyond Grist,
   * `count=true`): counted by SQLite unless access rules check rows one by one.
   */
  countRecords(tableId: string, q: RecordQuery = {}): number {
    return this.reads.countRecords(tableId, q);
  }

  /**
   * Beyond Grist (issue 40 §2, docs/queries.md): `tableId`'s rows grouped by columns with counts,
   * sums, averages, extremes and distinct counts, filtered by `where` and `having`, sorted and
   * limited, over the rows and columns the caller can read. 400 for a malformed part, an unknown
   * (or hidden) column, or more groups than the document's maximum without a limit.
   */
  aggregate(tableId: string, q: AggregateQuery): {records: AggregateRecord[]} {
    return {records: this.reads.aggregate(tableId, q)};
  }

  /**
   * A `where` condition on a user table resolved for the caller, as SQL over the table (quoted
   * `"Table"."col"`) with bound parameters, for reads on a connection of their own (exports).
   * 400 for a malformed condition. @internal
   */
  whereCondition(tableId: string, where: string): {sql: string; params: unknown[]} {
    return this.reads.whereCondition(tableId, where);
  }

  /**
   * Which of `ids` a `where` condition holds for now, for a reader under `guard` (a change feed's
   * subscriber), also inside another caller's write. @internal
   */
  matchingAmong(guard: DocGuard | null, tableId: string, where: string, ids: readonly number[]): Set<number> {
    return this.withGuard(guard, this.actor, this.docUrl, () => this.reads.matchingAmong(tableId, where, ids));
  }

  /** Checks a `where` condition on a table the caller can read (400/404). @internal */
  checkWhere(tableId: string, where: string): void {
    this.reads.checkWhere(tableId, where);
  }

  /** How the caller reads a table on a connection of its own (`DocReads.tableAccess`). */
  tableAccess(tableId: string): TableAccess | null {
    return this.reads.tableAccess(tableId);
  }

  /**
   * New `_grist_Attachments` rows as one write (Grist's AddAttachments user action), so that
   * formulas reading attachment metadata (`$Files.fileName`) see them and are recalculated;
   * `storeFiles` stores the files' contents in the same transaction first.
   */
  addAttachmentRecords(rows: Array<Record<string, CellValue>>, storeFiles: () => void): number[] {
    return this.write(() => {
      storeFiles();
      const ids = this.storage.metaAdd('_grist_Attachments', rows);
      // Grist stores timeUploaded (milliseconds, a DateTime column) as an INTEGER.
      this.storage
        .stmt(
          'UPDATE _grist_Attachments SET timeUploaded = CAST(timeUploaded AS INTEGER) WHERE id IN (SELECT value FROM json_each(?))',
        )
        .run(JSON.stringify(ids));
      return ids;
    });
  }

  /**
   * Sets `fileSize` of attachments as one write (Grist corrects them from the files an archive
   * restores, so that an edited size does not outlive the restore).
   */
  setAttachmentSizes(sizes: ReadonlyMap<number, number>): void {
    this.write(() => {
      for (const [id, size] of sizes) this.storage.metaUpdate('_grist_Attachments', id, {fileSize: size});
    });
  }

  /** Under access rules, the attachments a cell the user can read holds (null: all). */
  readableAttachments(): ReadonlySet<number> | null {
    return this.reads.readableAttachments();
  }

  /** The first row of a table whose column equals `value` (user attributes of access rules). */
  lookupRow(tableId: string, colId: string, value: CellValue, caseInsensitive: boolean): RowValues | null {
    return this.reads.lookupRow(tableId, colId, value, caseInsensitive);
  }

  // -------------------------------------------------------------------------------------------
  // Writing records (recordwrites.ts)

  /** POST /records: one BulkAddRecord over the union of the records' keys (missing ones null). */
  addRecords(tableId: string, records: Array<Record<string, CellValue>>, options?: WriteAs): number[] {
    return this.onTable(tableId, () => this.records.addRecords(tableId, records, options));
  }

  /** POST /data: `{colId: [values...]}`, the row count being the first column's length. */
  addColumnar(tableId: string, data: Record<string, CellValue[]>, options?: WriteAs): number[] {
    return this.onTable(tableId, () => this.records.addColumnar(tableId, data, options));
  }

  /** PATCH /records: one BulkUpdateRecord; every record must name the same fields (400). */
  updateRecords(
    tableId: string,
    records: Array<{id: number; fields: Record<string, CellValue>}>,
    options?: WriteAs,
  ): void {
    this.onTable(tableId, () => this.records.updateRecords(tableId, records, options));
  }

  /** PATCH /data: `{id: [...], colId: [...]}`. */
  updateColumnar(tableId: string, data: Record<string, CellValue[]>, options?: WriteAs): void {
    this.onTable(tableId, () => this.records.updateColumnar(tableId, data, options));
  }

  /** POST /records/delete, /data/delete: missing ids are ignored. */
  removeRecords(tableId: string, ids: unknown[], options?: WriteAs): void {
    this.onTable(tableId, () => this.records.removeRecords(tableId, ids, options));
  }

  /**
   * Beyond Grist (issue 40 §3): every row of `tableId` the caller can read for which `where` holds
   * gets `fields`, in one write (one BulkUpdateRecord), checked by access rules row by row as a
   * listed-ids update is. Returns the ids updated, ascending. 400 when more rows match than the
   * document's `maxRows` (GRISTLITE_WHERE_MAX_ROWS), nothing written.
   */
  updateRecordsWhere(tableId: string, where: string, fields: Record<string, CellValue>, options?: WriteAs): number[] {
    checkInput(fields, 'fields');
    return this.onTable(tableId, () =>
      this.write(() => {
        const ids = this.reads.matchingIds(tableId, where);
        if (ids.length)
          this.records.updateRecords(
            tableId,
            ids.map((id) => ({id, fields})),
            options,
          );
        return ids;
      }, options?.role),
    );
  }

  /** Conditions resolved wholly in SQL, those the engine helped, and the rows it evaluated. @internal */
  /** Whether a read with `where` may answer differently with the clock alone (NOW(), TODAY()): not revalidated. */
  whereIsVolatile(tableId: string, where: string): boolean {
    return this.reads.whereIsVolatile(tableId, where);
  }

  get whereCounts(): {readonly sql: number; readonly engine: number; readonly engineRows: number} {
    return this.whereState.counts;
  }

  /**
   * The ids of the rows the caller can read for which `where` holds, ascending (tests compare the
   * SQL translation with the engine's evaluation through `forceEngine`). @internal
   */
  whereIds(tableId: string, where: string, opts: {forceEngine?: boolean} = {}): number[] {
    return this.reads.matchingIds(tableId, where, {...opts, unbounded: true});
  }

  /** Beyond Grist (issue 40 §3): removes every row `updateRecordsWhere` would update, in one write; their ids. */
  removeRecordsWhere(tableId: string, where: string, options?: WriteAs): number[] {
    return this.onTable(tableId, () =>
      this.write(() => {
        const ids = this.reads.matchingIds(tableId, where);
        if (ids.length) this.records.removeRecords(tableId, ids, options);
        return ids;
      }, options?.role),
    );
  }

  /**
   * Values as a write with parsing on would store them in a column (text parsed by the column's
   * parser, references looked up in the table they point to now, then converted; what does not
   * convert becomes alt-text): imports convert their rows with it before writing them (issue 42).
   */
  convertForColumn(tableId: string, colId: string, values: CellValue[]): CellValue[] {
    const table = this.storage.meta.tables.get(tableId);
    const col = table?.byId.get(colId);
    if (!col) throw new NotFound(`Column "${colId}" not found in table "${tableId}"`);
    return this.storage.convertColumnValues(col, values, {parse: true});
  }

  /** PUT /records: add-or-update keyed on `require` (see `DocRecordWrites.upsertRecords`). */
  upsertRecords(tableId: string, records: UpsertRecord[], options: UpsertOptions = {}): UpsertResult {
    return this.records.upsertRecords(tableId, records, options);
  }

  // -------------------------------------------------------------------------------------------
  // User actions

  /**
   * Runs `fn` as one write: whatever it writes through this document commits together, or not at
   * all when it throws. `fn` must be synchronous (the document is; an `await` inside would let
   * other writes into the transaction), so a function returning a promise is refused and undone.
   */
  transaction<T>(fn: () => T, options?: WriteAs): T {
    return this.write(() => {
      const out = fn();
      if (out && typeof (out as {then?: unknown}).then === 'function') {
        throw new BadRequest('A transaction function must be synchronous (it returned a promise); nothing was written');
      }
      return out;
    }, options?.role);
  }

  /**
   * Inside a write: formulas (and summary tables) recalculated for what it wrote so far, so that
   * a read within `transaction` sees them (issue 37 §6: it read the values from before the
   * write). The write's own recalculation at its end then has only what came after to do.
   */
  settleFormulas(): void {
    const changes = this.storage.changes;
    if (changes) this.recalcs.recalc(changes);
  }

  /**
   * Beyond Grist (D122): the recorded changes to a user table, or one of its records, newest
   * first, read through the current caller's access rules (`as`). history/changes.ts.
   */
  tableHistory(tableId: string, q: HistoryQuery = {}): {changes: HistoryEntry[]; next: HistoryPosition | null} {
    const table = this.table(this.resolveTableId(tableId));
    // A table the caller cannot read is as if absent, as for /columns.
    if (this.guard && !this.guard.tableVisible(table.tableId)) throw new NotFound(`Table not found "${tableId}"`);
    if (table.isMeta) throw new BadRequest('History is read for user tables only');
    return tableHistory(this.db, this.guard, table, q);
  }

  /** POST /apply: a bundle of user actions, applied atomically. */
  applyUserActions(actions: unknown[], options?: WriteAs): ApplyResult {
    if (!Array.isArray(actions)) {
      throw new BadRequest('Invalid payload: expected an array of user actions');
    }
    checkInput(actions, 'user actions');
    checkSchemaActionCount(actions);
    const opts = this.records.opts(options);
    if (actions.some(changesFormulas))
      return this.asFormulaStructure(() => this.applyUserActionsNow(actions, opts, options));
    return this.applyUserActionsNow(actions, opts, options);
  }

  private applyUserActionsNow(actions: unknown[], opts: WriteOptions, options?: WriteAs): ApplyResult {
    // Everything the answer needs is built inside the transaction: once it commits, nothing that
    // follows can throw (issue 11: a write committed, then its action record failed with a 500).
    const result = this.write(() => {
      // Grist records a bundle of user actions even when it changes nothing, with them as given.
      this.recordEmpty = true;
      this.history.userActions = actions as unknown[][];
      const placeholders = new Placeholders();
      const retValues = actions.map((given) => {
        const a = placeholders.rewrite(given, this.storage.meta);
        const ret = this.applyAction(a, opts);
        placeholders.record(a, ret);
        // The document's first formula appeared: later actions of the bundle reach its engine
        // (a trigger formula must see the updates and additions that follow it).
        if (!this.storage.formulas && hasFormulas(this.storage.meta)) {
          this.storage.formulas = this.recalcs.fresh();
        }
        return ret;
      });
      const actionNum = this.actionNum + 1;
      const actionHash = createHash('sha256')
        .update(JSON.stringify([actionNum, actions]))
        .digest('hex');
      return {actionNum, actionHash, retValues, isModification: !this.storage.changes!.isEmpty};
    }, options?.role);
    const recorded = this.lastRecorded as RecordedAction | null;
    if (recorded) {
      this.actionNum = recorded.actionNum;
      return {...result, ...recorded};
    }
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

/** User actions Grist checks for structure rights before its engine runs (they may carry formulas). */
const FORMULA_ACTIONS = new Set([
  'ModifyColumn',
  'SetDisplayFormula',
  'ConvertFromColumn',
  'CopyFromColumn',
  'AddReverseColumn',
]);
const FORMULA_TABLES = new Set(['_grist_Tables_column', '_grist_Validations']);

function changesFormulas(action: unknown): boolean {
  if (!Array.isArray(action)) return false;
  const [name, tableId] = action;
  return FORMULA_ACTIONS.has(name) || (/Record$/.test(String(name)) && FORMULA_TABLES.has(tableId));
}
