/** Grist's logical functions (grist-core sandbox/grist/functions/logical.py). */
import {type PyCallable, type Value, truthy} from '../values.js';
import {ERROR, def, isAltText, lazy, lazyOrError, rest, v} from './util.js';

/** Grist's is_error: an exception, an AltText (wrong type in a typed column) or NaN. */
export function isErrorValue(x: Value | typeof ERROR): boolean {
  return x === ERROR || isAltText(x as Value) || (typeof x === 'number' && Number.isNaN(x));
}

// The interpreter passes the lazy arguments of IF, IFERROR, ISERR and ISERROR as callables;
// called directly, plain values work too.
export const logicalFunctions: Record<string, PyCallable> = {
  AND: def('AND', ['logical_expression', '*logical_expressions'], {}, (a) =>
    [v(a, 'logical_expression'), ...rest(a, 'logical_expressions')].every(truthy),
  ),
  FALSE: def('FALSE', [], {}, () => false),
  IF: def('IF', ['logical_expression', 'value_if_true', 'value_if_false'], {}, (a) =>
    truthy(v(a, 'logical_expression')) ? lazy(v(a, 'value_if_true')) : lazy(v(a, 'value_if_false')),
  ),
  IFERROR: def('IFERROR', ['value', 'value_if_error'], {value_if_error: ''}, (a) => {
    const x = lazyOrError(v(a, 'value'));
    return isErrorValue(x) ? v(a, 'value_if_error') : (x as Value);
  }),
  NOT: def('NOT', ['logical_expression'], {}, (a) => !truthy(v(a, 'logical_expression'))),
  OR: def('OR', ['logical_expression', '*logical_expressions'], {}, (a) =>
    [v(a, 'logical_expression'), ...rest(a, 'logical_expressions')].some(truthy),
  ),
  TRUE: def('TRUE', [], {}, () => true),
};
