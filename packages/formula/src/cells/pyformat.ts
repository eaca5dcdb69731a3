/**
 * Python's str()/repr() of the values the data engine sees, used where Grist turns a value it
 * cannot convert into "alt-text" (`six.text_type(value)`). Values are in Grist's cell encoding
 * (`["L", ...]` lists, `["d", ts]` dates...); numbers and strings are written by the Python value
 * layer (pyvalues/) that the formula engine uses too.
 */
import type {CellValue} from './cell-value.js';
import {pyNumberStr} from '../pyvalues/numbers.js';
import {strRepr as pyStringRepr} from '../pyvalues/strings.js';

function isoDate(ts: number): string {
  const d = new Date(ts * 1000);
  return Number.isNaN(d.getTime()) ? String(ts) : d.toISOString().slice(0, 10);
}

/**
 * str() of a decoded value. `tuples` renders lists as Python tuples (ChoiceList cells are tuples
 * in the engine). `isFloat` marks numbers held as floats (Numeric, Date... columns).
 */
export function pyStr(v: CellValue, opts: {tuples?: boolean; isFloat?: boolean} = {}): string {
  if (typeof v === 'string') {
    return v;
  }
  if (Array.isArray(v) && v[0] === 'd' && typeof v[1] === 'number' && Number.isFinite(v[1])) {
    return isoDate(v[1]);
  }
  if (Array.isArray(v) && v[0] === 'R') {
    return `${String(v[1])}[${String(v[2])}]`;
  }
  return pyRepr(v, opts);
}

export function pyRepr(v: CellValue, opts: {tuples?: boolean; isFloat?: boolean} = {}): string {
  if (v === null || v === undefined) {
    return 'None';
  }
  if (typeof v === 'boolean') {
    return v ? 'True' : 'False';
  }
  if (typeof v === 'number') {
    return pyNumberStr(v, opts.isFloat);
  }
  if (typeof v === 'string') {
    return pyStringRepr(v);
  }
  if (Array.isArray(v)) {
    const [code, ...args] = v;
    const inner = {isFloat: opts.isFloat};
    switch (code) {
      case 'L': {
        const items = args.map((a) => pyRepr(a, inner));
        if (opts.tuples) {
          return `(${items.join(', ')}${items.length === 1 ? ',' : ''})`;
        }
        return `[${items.join(', ')}]`;
      }
      case 'O': {
        const obj = (args[0] ?? {}) as Record<string, CellValue>;
        return `{${Object.entries(obj)
          .map(([k, x]) => `${pyStringRepr(k)}: ${pyRepr(x, inner)}`)
          .join(', ')}}`;
      }
      case 'd': {
        if (typeof args[0] !== 'number' || !Number.isFinite(args[0])) {
          return JSON.stringify(v);
        }
        const [y, m, d] = isoDate(args[0]).split('-').map(Number);
        return `datetime.date(${y}, ${m}, ${d})`;
      }
      case 'R':
        return `${String(args[0])}[${String(args[1])}]`;
      case 'r':
        return `${String(args[0])}[${pyRepr(['L', ...((args[1] ?? []) as CellValue[])])}]`;
      default:
        return JSON.stringify(v);
    }
  }
  return JSON.stringify(v);
}
