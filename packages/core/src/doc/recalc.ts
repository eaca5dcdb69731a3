/**
 * A document's formulas during its writes: the formula engine loaded from the document (which
 * evaluates every formula to learn dependencies, as Grist does when it opens a document), and,
 * after each write's actions, the recalculation that brings affected cells up to date and stores
 * the ones that changed, summaries kept in step. `GristDoc` calls it inside each write.
 */
import type Database from 'better-sqlite3';
import type {BudgetSettings} from '@gristlite/formula';
import type {FormulaEngine} from '@gristlite/formula';
import type {ChangeSet} from './changes.js';
import {
  formulasTrusted,
  hasFormulas,
  loadFormulaEngine,
  markFormulasComputed,
  readsMetadata,
  writeRecalc,
} from './formulas.js';
import type {DocStorage} from './storage.js';
import {SummarySync, syncSummaries} from './summary.js';

/** How often volatile formulas (NOW(), TODAY()) are refreshed: hourly, as in Grist. */
const CLOCK_MSEC = 3600_000;

/** What recalculation needs of its document. */
export interface RecalcSource {
  readonly storage: DocStorage;
  readonly db: Database.Database;
  /** Budgets over the engine's defaults (the engine's settings). */
  readonly formulaBudget?: Partial<BudgetSettings>;
}

export class DocRecalc {
  /** Whether `storage.formulas` reflects the document (false: load it at the next write). */
  private loaded = false;
  /** When volatile formulas (NOW(), TODAY()) were last refreshed. */
  private clockAt = Date.now();
  /** Whether the document is known to carry the "formulas computed" mark. */
  private marked = false;
  /** Summary rows kept in step with their sources, through an index of each summary's groups. */
  private readonly summaries = new SummarySync();

  constructor(private readonly src: RecalcSource) {}

  /** Whether the engine is loaded. */
  get isLoaded(): boolean {
    return this.loaded;
  }

  /** After a rolled-back write: the engine saw undone actions, so it is loaded again when needed. */
  forget(): void {
    this.loaded = false;
    this.summaries.forget();
  }

  /**
   * Loads the formula engine from the document, if it has formulas and it is not loaded yet, at
   * the start of a write. When this engine version computed the stored values and kept them
   * current, they are trusted: only formulas whose dependencies cannot be read off their text are
   * evaluated (issue 26 §2). Otherwise every formula is (what Grist does when it opens a
   * document), and the write that loads it stores the cells that differ.
   */
  load(): void {
    this.summaries.start(this.src.storage);
    if (this.loaded) {
      return;
    }
    this.src.storage.formulas = hasFormulas(this.src.storage.meta) ? this.fresh(formulasTrusted(this.src.db)) : null;
    this.loaded = true;
  }

  /**
   * An engine loaded from SQLite (in the current transaction). `trusted`: the stored values are
   * current (only before a write changed anything); else every formula is marked for computing.
   */
  fresh(trusted = false): FormulaEngine {
    const fx = loadFormulaEngine(this.src.db, this.src.storage.meta, this.src.formulaBudget);
    this.src.storage.formulasReadMeta = readsMetadata(this.src.storage.meta);
    if (trusted) fx.trustStored();
    else fx.recomputeAll();
    return fx;
  }

  /**
   * After a write's actions: brings every affected formula cell up to date and writes the cells
   * that changed (Grist's recalc at the end of a user action bundle). A document whose first
   * formula appeared in this write gets its engine now, computing every formula.
   */
  recalc(changes: ChangeSet): void {
    let fx = this.src.storage.formulas;
    // A formula now reading metadata tables the engine does not hold: load it again with them.
    if (
      fx &&
      (this.src.storage.formulasStale || (!this.src.storage.formulasReadMeta && readsMetadata(this.src.storage.meta)))
    ) {
      fx = null;
    }
    this.src.storage.formulasStale = false;
    if (!fx) {
      if (!hasFormulas(this.src.storage.meta)) {
        return;
      }
      fx = this.fresh();
      this.src.storage.formulas = fx;
    }
    const now = Date.now();
    if (now - this.clockAt >= CLOCK_MSEC) {
      // Grist refreshes NOW()/TODAY() hourly; here at the first write of each hour.
      fx.invalidateClock();
      this.clockAt = now;
    }
    this.summaries.beforeRecalc(this.src.storage, changes);
    syncSummaries(this.src.storage, changes);
    if (!this.marked) {
      // The document's formulas are now kept current by gristlite (docs/decisions.md).
      if (!formulasTrusted(this.src.db)) {
        markFormulasComputed(this.src.db);
      }
      this.marked = true;
    }
    if (!fx.pending) {
      return;
    }
    let result = fx.recalc();
    writeRecalc(this.src.storage, changes, result);
    // Groups left empty go; summaries grouped by a formula column follow the values the recalc
    // gave it. Each round changes only summary rows, so it settles within a few.
    for (let round = 0; round < 4; round++) {
      const changed = this.summaries.afterRecalc(this.src.storage, changes, result, round === 0);
      if (!(syncSummaries(this.src.storage, changes, true) || changed) || !fx.pending) {
        break;
      }
      result = fx.recalc();
      writeRecalc(this.src.storage, changes, result);
    }
  }
}
