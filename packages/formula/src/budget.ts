/**
 * Evaluation budgets: every formula run is bounded in loop iterations, call depth, the size of the
 * strings and lists it builds, and the wall time of one recalculation. Exceeding one raises a
 * Python exception (TimeoutError, RecursionError, MemoryError) that becomes an error cell.
 */
import {PyException} from './values.js';

/** What one formula evaluation may spend (docs/formulas.md, Limits); exceeding one gives an error cell. */
export interface BudgetSettings {
  /** Loop iterations (for/while/comprehension items) per cell evaluation. Default 10,000,000. */
  maxIterations: number;
  /** Nested Python function calls per cell evaluation. Default 200 (CPython allows ~1000). */
  maxDepth: number;
  /** Longest string or list a formula may build. Default 10,000,000 characters/items. */
  maxSize: number;
  /** Milliseconds of evaluation per cell. Default 1,000. */
  maxCellMs: number;
  /** Milliseconds of evaluation per recalc(); cells after that become TimeoutError. Default 30,000. */
  maxRecalcMs: number;
  /**
   * Characters and items of all the results one recalc() stores, together (a string counts its
   * length, a list its items and theirs). Cells beyond it become MemoryError. Default 100,000,000.
   */
  maxRecalcSize: number;
}

/** The budgets used where none is given (the README's "Safety and budgets"). */
export const DEFAULT_BUDGET: BudgetSettings = {
  maxIterations: 10_000_000,
  maxDepth: 200,
  maxSize: 10_000_000,
  maxCellMs: 1_000,
  maxRecalcMs: 30_000,
  maxRecalcSize: 100_000_000,
};

/** CPython's PY_SSIZE_T_MAX (64-bit): the largest length, count or width CPython can take. */
export const SSIZE_T_MAX = 2n ** 63n - 1n;
/** C's INT_MAX: CPython reads tab sizes and float precisions as a C int. */
export const C_INT_MAX = 2n ** 31n - 1n;
export const INDEX_OVERFLOW = "cannot fit 'int' into an index-sized integer";
export const SSIZE_OVERFLOW = 'Python int too large to convert to C ssize_t';
export const C_INT_OVERFLOW = 'Python int too large to convert to C int';

/**
 * A Python int used as a size (a width, a count) as CPython converts it: OverflowError with
 * `message` when it does not fit `max` (either sign), else the number.
 */
export function sizeArg(n: bigint, message = SSIZE_OVERFLOW, max = SSIZE_T_MAX): number {
  if (n > max || n < -max - 1n) throw new PyException('OverflowError', message);
  return Number(n);
}

export class Budget {
  settings: BudgetSettings;
  iterations = 0;
  depth = 0;
  private deadline = Infinity;
  private recalcDeadline = Infinity;
  private ticks = 0;
  private cells = 0;
  private stored = 0;

  constructor(settings: Partial<BudgetSettings> = {}) {
    this.settings = {...DEFAULT_BUDGET, ...settings};
  }

  startRecalc(): void {
    this.cells = 0;
    this.stored = 0;
    this.recalcDeadline = Date.now() + this.settings.maxRecalcMs;
  }
  endRecalc(): void {
    this.recalcDeadline = Infinity;
  }

  /** Called before each cell evaluation. */
  startCell(): void {
    this.iterations = 0;
    this.depth = 0;
    // Reading the clock costs more than a simple formula: refresh the deadline every 64 cells,
    // and let tick() check it (a cell that loops reads the clock every 1024 iterations).
    if ((this.cells++ & 63) === 0 || this.ticks !== 0) {
      const now = Date.now();
      if (now > this.recalcDeadline)
        throw new PyException('TimeoutError', 'formula evaluation exceeded the time budget of this update');
      this.deadline = Math.min(now + this.settings.maxCellMs, this.recalcDeadline);
    }
    this.ticks = 0;
  }

  /** One loop iteration. */
  tick(): void {
    if (++this.iterations > this.settings.maxIterations) {
      throw new PyException('TimeoutError', `formula exceeded ${this.settings.maxIterations} loop iterations`);
    }
    if ((++this.ticks & 1023) === 0 && Date.now() > this.deadline) {
      throw new PyException('TimeoutError', 'formula evaluation took too long');
    }
  }

  /**
   * Milliseconds left of the cell's time (at least 1), for work that cannot call tick() and is
   * interrupted from outside instead (a regular expression under a watchdog).
   */
  cellMsLeft(): number {
    const left = Math.min(this.deadline, this.recalcDeadline) - Date.now();
    return Number.isFinite(left) ? Math.max(1, left) : this.settings.maxCellMs;
  }

  enter(): void {
    if (++this.depth > this.settings.maxDepth) {
      this.depth--;
      throw new PyException('RecursionError', 'maximum recursion depth exceeded');
    }
  }
  leave(): void {
    this.depth--;
  }

  checkSize(n: number): void {
    if (n > this.settings.maxSize) throw new PyException('MemoryError', `result too large (${n} items)`);
  }

  /** A result of `n` characters/items is being stored: MemoryError past the recalc's total. */
  chargeStored(n: number): void {
    this.checkSize(n);
    if (this.stored + n > this.settings.maxRecalcSize) {
      throw new PyException('MemoryError', `the results of this update exceed ${this.settings.maxRecalcSize} items`);
    }
    this.stored += n;
  }
}

/** The budget of the evaluation in progress (evaluation is synchronous, one at a time). */
export let currentBudget = new Budget();
export function setCurrentBudget(b: Budget): Budget {
  const prev = currentBudget;
  currentBudget = b;
  return prev;
}
