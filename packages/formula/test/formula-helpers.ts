import {PyException, type Value, repr} from '../src/values.js';
import {builtinTable} from '../src/builtins.js';
import {parseFormula} from '../src/grist.js';
import {compileFunctionBody} from '../src/compiler.js';
import {defaultLibrary, findModule} from '../src/library.js';
import {gristFunctions} from '../src/functions/index.js';

const LIBRARY = defaultLibrary();
import {Budget, type BudgetSettings, setCurrentBudget} from '../src/budget.js';

const builtins = builtinTable();

/** Runs a formula body (Grist rules: last expression returned) with builtins only (and Grist's functions with `grist`). */
export function run(src: string, budget: Partial<BudgetSettings> = {}, grist = false): Value {
  const body = parseFormula(src);
  const compiled = compileFunctionBody(body, ['rec', 'table'], {
    vars: new Map(),
    resolve: (name) => (grist && Object.hasOwn(gristFunctions, name) ? gristFunctions[name] : builtins.get(name)),
    importModule: (name) => {
      const m = findModule(LIBRARY, name);
      if (m === undefined) throw new PyException('ImportError', `No module named '${name}'`);
      return m;
    },
  });
  const b = new Budget(budget);
  const prev = setCurrentBudget(b);
  try {
    b.startCell();
    return compiled.run([null, null]);
  } finally {
    setCurrentBudget(prev);
  }
}

/** repr() of the result, or "!Type: message" for an exception (`grist`: Grist's functions too). */
export function pyrepr(src: string, budget: Partial<BudgetSettings> = {}, grist = false): string {
  try {
    return repr(run(src, budget, grist));
  } catch (e) {
    if (e instanceof PyException) return `!${e.type}: ${e.message}`;
    throw e;
  }
}
