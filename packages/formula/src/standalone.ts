/**
 * One formula evaluated on its own, without tables: what a host uses to try a formula body or to
 * run Python's builtins and Grist's functions over values it has (tables and rows go through
 * `FormulaEngine`).
 */
import {Budget, type BudgetSettings, setCurrentBudget} from './budget.js';
import {builtinTable} from './builtins.js';
import {compileFunctionBody} from './compiler.js';
import {gristFunctions} from './functions/index.js';
import {parseFormula} from './grist.js';
import {defaultLibrary, findModule} from './library.js';
import {PyException, type Value} from './values.js';

/** How `evaluateFormula` runs: the evaluation budget, and whether Grist's functions are in scope. */
export interface EvaluateOptions {
  budget?: Partial<BudgetSettings>;
  /** Grist's function library (`SUM`, `DATEADD`, ...) beside Python's builtins (default: builtins only). */
  grist?: boolean;
}

/**
 * Compiles and runs a formula body with Grist's rules (the last expression is the result; `rec`
 * and `table` are None), importing modules from the default library. Throws `PySyntaxError` for
 * a body that does not parse and `PyException` for a Python exception.
 */
export function evaluateFormula(source: string, opts: EvaluateOptions = {}): Value {
  const builtins = builtinTable();
  const library = defaultLibrary();
  const grist = opts.grist ?? false;
  const compiled = compileFunctionBody(parseFormula(source), ['rec', 'table'], {
    vars: new Map(),
    resolve: (name) => (grist && Object.hasOwn(gristFunctions, name) ? gristFunctions[name] : builtins.get(name)),
    importModule: (name) => {
      const m = findModule(library, name);
      if (m === undefined) throw new PyException('ImportError', `No module named '${name}'`);
      return m;
    },
  });
  const b = new Budget(opts.budget ?? {});
  const prev = setCurrentBudget(b);
  try {
    b.startCell();
    return compiled.run([null, null]);
  } finally {
    setCurrentBudget(prev);
  }
}
