// repr() of a formula body's result, for core's tests that check formulas beside documents (the
// language's own tests, with the full helper, are in packages/formula/test).
import {type BudgetSettings, PyException, evaluateFormula, repr} from '@gristlite/formula';

/** repr() of the result, or "!Type: message" for an exception (`grist`: Grist's functions too). */
export function pyrepr(src: string, budget: Partial<BudgetSettings> = {}, grist = false): string {
  try {
    return repr(evaluateFormula(src, {budget, grist}));
  } catch (e) {
    if (e instanceof PyException) return `!${e.type}: ${e.message}`;
    throw e;
  }
}
