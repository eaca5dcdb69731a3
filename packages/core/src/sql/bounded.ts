/**
 * Statements SQLite can prove cheap (issue 28): `/sql` sends every statement to a worker process,
 * because better-sqlite3 cannot interrupt a running one (the worker is killed at its deadline).
 * The hop costs about 1 ms over HTTP, ten times a lookup by id. A statement whose compiled program
 * (`EXPLAIN`) has no loop other than the bounded ones SQLite emits for subqueries, and only
 * opcodes of constant cost, finishes in time proportional to its program's length: it needs no
 * deadline, so it runs on the document's own connection, on the caller's thread.
 *
 * The proof is a whitelist, not a blacklist: an opcode missing from `OPCODES` (a new SQLite's, a
 * function call, `Count`, a sort, a virtual table) sends the statement to the pool as before.
 */
import type Database from 'better-sqlite3';
import {BadRequest} from '../base/index.js';
import {runSelect, userMessage, type ResultCaps} from './execute.js';
import type {SqlResult} from './pool.js';
import {bindArgs, parameterNames, selectText, sqlParams, type SqlParam} from './statement.js';

/**
 * Opcodes of constant cost. `true`: P2 is a jump address (checked for backward jumps); `false`:
 * P2 is a register, a column, a count or a page. Cursors: a single seek or probe, never a step.
 */
const OPCODES: ReadonlyMap<string, boolean> = new Map([
  // Program frame: Init jumps to the block that opens the transaction, which jumps back once.
  ['Init', true],
  ['Goto', true],
  ['Halt', false],
  ['Transaction', false],
  ['TableLock', false],
  ['ResultRow', false],
  ['Noop', false],
  ['ColumnsUsed', false],
  ['CursorHint', false],
  // Cursors: opened (checked: the main database only), positioned once, read.
  ['OpenRead', false],
  ['Close', false],
  ['NullRow', false],
  ['SeekRowid', true],
  ['NotExists', true],
  ['SeekGE', true],
  ['SeekGT', true],
  ['SeekLE', true],
  ['SeekLT', true],
  ['IdxGE', true],
  ['IdxGT', true],
  ['IdxLE', true],
  ['IdxLT', true],
  ['IdxRowid', false],
  ['DeferredSeek', false],
  ['Found', true],
  ['NotFound', true],
  ['Rowid', false],
  ['Column', false],
  // Registers and values.
  ['Integer', false],
  ['Int64', false],
  ['Real', false],
  ['String8', false],
  ['String', false],
  ['Null', false],
  ['SoftNull', false],
  ['Blob', false],
  ['Variable', false],
  ['Copy', false],
  ['SCopy', false],
  ['IntCopy', false],
  ['Move', false],
  ['Affinity', false],
  ['RealAffinity', false],
  ['MustBeInt', true],
  ['Cast', false],
  ['ZeroOrNull', false],
  ['IsTrue', false],
  ['Not', false],
  ['BitNot', false],
  ['And', false],
  ['Or', false],
  ['Add', false],
  ['Subtract', false],
  ['Multiply', false],
  ['Divide', false],
  ['Remainder', false],
  ['BitAnd', false],
  ['BitOr', false],
  ['ShiftLeft', false],
  ['ShiftRight', false],
  ['AddImm', false],
  ['ClrSubtype', false],
  // Conditional jumps.
  ['Eq', true],
  ['Ne', true],
  ['Lt', true],
  ['Le', true],
  ['Gt', true],
  ['Ge', true],
  ['ElseEq', true],
  ['IsNull', true],
  ['NotNull', true],
  ['If', true],
  ['IfNot', true],
  ['IfNullRow', true],
  ['IsType', true],
  ['Once', true],
  ['IfPos', true],
  ['IfNotZero', true],
  ['DecrJumpZero', true],
  // Coroutines (a subquery in FROM): the consumer loops once per value the body yields.
  ['InitCoroutine', true],
  ['Yield', true],
  ['EndCoroutine', false],
  // Subroutines (a scalar subquery): a call runs the body once; Return goes back to the caller
  // (or falls through when it was entered by BeginSubrtn), so it is no loop of its own.
  ['BeginSubrtn', false],
  ['Gosub', false],
  ['Return', false],
]);

/**
 * Scalar functions of cost linear in their arguments (cells or literals). Not `instr`, nor `trim`
 * and its kin with a character set: quadratic in two large cells, they stay under the deadline.
 */
const FUNCTIONS = new Set([
  'abs',
  'coalesce',
  'ifnull',
  'iif',
  'length',
  'lower',
  'max',
  'min',
  'nullif',
  'round',
  'sign',
  'substr',
  'substring',
  'typeof',
  'unicode',
  'upper',
]);

/**
 * Longest program run inline. No listed opcode or function makes a value larger than its largest
 * input (`||` would double one at each step, so it is not listed), so what a bounded program holds
 * at once is at most this many cells: no more than reading one wide row.
 */
const MAX_PROGRAM = 256;

/** One row of `EXPLAIN`, raw: addr, opcode, p1, p2, p3, p4, p5, comment. */
type Instruction = [number, string, number, number, number, unknown, number, unknown];

/**
 * Whether a compiled program runs in time bounded by its length: whitelisted opcodes only, cursors
 * on the main database only (not another connection's temp tables, not `privatePages`), and
 * every backward jump either the frame's return to its start or a coroutine consumer's loop.
 */
export function isBoundedProgram(program: readonly Instruction[], privatePages: ReadonlySet<number>): boolean {
  if (!program.length || program.length > MAX_PROGRAM || program[0][1] !== 'Init') return false;
  const initBlock = program[0][3];
  for (const [addr, opcode, p1, p2, p3, p4] of program) {
    if (opcode === 'Function' || opcode === 'PureFunc') {
      const name = typeof p4 === 'string' ? p4.replace(/\(.*$/, '').toLowerCase() : '';
      if (!FUNCTIONS.has(name)) return false;
      continue;
    }
    const jumps = OPCODES.get(opcode);
    if (jumps === undefined) return false;
    if ((opcode === 'OpenRead' || opcode === 'Transaction') && (opcode === 'OpenRead' ? p3 : p1) !== 0) return false;
    if (opcode === 'OpenRead' && privatePages.has(p2)) return false;
    // A Yield inside a coroutine's body, and an InitCoroutine that falls through, have P2 0: no jump.
    if (!jumps || p2 > addr || (p2 === 0 && (opcode === 'Yield' || opcode === 'InitCoroutine'))) continue;
    // A backward jump: the frame's single return to address 1, or a Goto back to a coroutine's
    // Yield (that loop runs once per value the coroutine yields; the coroutine's own body is
    // checked as part of the same program).
    if (opcode !== 'Goto') return false;
    if (p2 === 1 && addr >= initBlock) continue;
    if (program[p2]?.[1] !== 'Yield') return false;
  }
  return true;
}

interface Verdict {
  schemaVersion: number;
  /** The prepared statement when bounded (kept: preparing cost as much as running), else null. */
  stmt: Database.Statement | null;
}

/** Verdicts kept per connection. */
const MAX_VERDICTS = 256;

/**
 * The bounded-statement path of one document connection: verdicts cached by statement text and
 * schema version (a table replaced by a view changes the program).
 */
export class BoundedStatements {
  readonly #db: Database.Database;
  readonly #verdicts = new Map<string, Verdict>();
  readonly #schemaVersion: Database.Statement;
  #privatePages: {schemaVersion: number; pages: Set<number>} | null = null;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#schemaVersion = db.prepare('PRAGMA schema_version').pluck();
  }

  /**
   * The records' JSON text of `text` (already cut by `selectText`) when it is provably bounded,
   * else undefined (run it in the pool). Errors are the same as a worker's (`executeSelect`).
   */
  run(text: string, args: SqlParam[], caps: ResultCaps): string | undefined {
    if (!this.#db.open || this.#db.inTransaction) return undefined;
    const version = this.#schemaVersion.get() as number;
    let verdict = this.#verdicts.get(text);
    if (!verdict || verdict.schemaVersion !== version) {
      const bounded = this.#analyse(text, args, version);
      // Not compiled (a syntax error, wrong arguments): the pool reports why, as before.
      if (bounded === undefined) return undefined;
      verdict = {schemaVersion: version, stmt: bounded ? this.#db.prepare(text) : null};
      if (this.#verdicts.size >= MAX_VERDICTS) this.#verdicts.delete(this.#verdicts.keys().next().value!);
      this.#verdicts.set(text, verdict);
    }
    if (!verdict.stmt) return undefined;
    // Private tables were ruled out by the verdict: no second EXPLAIN per run.
    return runSelect(this.#db, verdict.stmt, text, args, caps, {privateChecked: true});
  }

  #analyse(text: string, args: SqlParam[], version: number): boolean | undefined {
    // EXPLAIN needs its parameters bound; the program does not depend on their values.
    const bound = bindArgs(parameterNames(text), args);
    if (typeof bound === 'string') return undefined;
    let program: Instruction[];
    try {
      program = this.#db
        .prepare(`EXPLAIN ${text}`)
        .raw()
        .all(...bound) as Instruction[];
    } catch {
      return undefined;
    }
    if (this.#privatePages?.schemaVersion !== version) {
      const pages = this.#db
        .prepare(
          `SELECT rootpage FROM sqlite_master WHERE rootpage > 0 AND tbl_name LIKE '\\_gristlite\\_%' ESCAPE '\\'`,
        )
        .pluck()
        .all() as number[];
      this.#privatePages = {schemaVersion: version, pages: new Set(pages)};
    }
    return isBoundedProgram(program, this.#privatePages.pages);
  }
}

/**
 * `/sql` on a document open in this process, when SQLite proves the statement bounded: its answer,
 * or its error as the pool would give it (400 with SQLite's message). Undefined: use the pool.
 * `statements` keeps each connection's verdicts (freed with the connection).
 */
export function runBounded(
  statements: WeakMap<Database.Database, BoundedStatements>,
  db: Database.Database,
  sql: string,
  args: unknown[] | null,
  caps: ResultCaps,
): Promise<SqlResult> | undefined {
  try {
    const text = selectText(sql);
    const params = sqlParams(args);
    let bounded = statements.get(db);
    if (!bounded) {
      bounded = new BoundedStatements(db);
      statements.set(db, bounded);
    }
    const json = bounded.run(text, params, caps);
    return json === undefined ? undefined : Promise.resolve({statement: sql, records: JSON.parse(json)});
  } catch (e) {
    const message = userMessage(e);
    return Promise.reject(message === undefined || e instanceof BadRequest ? e : new BadRequest(message));
  }
}
