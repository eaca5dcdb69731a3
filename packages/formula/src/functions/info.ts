/** Grist's info functions (grist-core sandbox/grist/functions/info.py), except those that need records. */
import type {PyCallable, Value} from '../values.js';
import {PyDate} from '../datetime.js';
import {compile} from '../modules/re.js';
import {dateToXl} from './date.js';
import {pyStrip} from './text.js';
import {ERROR, def, isAltText, isNumber, lazyOrError, strArg, v} from './util.js';
import {isErrorValue} from './logical.js';

// Grist's email and URL patterns (Google Sheets-like, stricter on hostnames), written for our re.
const EMAIL = compile("^\\w[\\w%+/='-]*(\\.[\\w%+/='-]+)*@([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\\.)+[A-Za-z]{2,24}$");
const URL = compile(
  '^((ftp|http|https|gopher|mailto|news|telnet|aim)://)?(\\w+@)?([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\\.)+' +
    "[A-Za-z]{2,24}([/?][-\\w!#$%&'()*+,./:;=?@~]*)?$",
);

/** Records and record sets of the interpreter, recognized by shape (records.ts). */
const isRecord = (x: Value): boolean =>
  x !== null &&
  typeof x === 'object' &&
  !Array.isArray(x) &&
  typeof (x as {rowId?: unknown}).rowId === 'number' &&
  typeof (x as {tableId?: unknown}).tableId === 'string';
const isRecordSet = (x: Value): boolean =>
  x !== null &&
  typeof x === 'object' &&
  !Array.isArray(x) &&
  Array.isArray((x as {rowIds?: unknown}).rowIds) &&
  typeof (x as {tableId?: unknown}).tableId === 'string';

const isText = (x: Value) => typeof x === 'string' || isAltText(x);

export const infoFunctions: Record<string, PyCallable> = {
  ISERR: def('ISERR', ['value'], {}, (a) => lazyOrError(v(a, 'value')) === ERROR),
  ISERROR: def('ISERROR', ['value'], {}, (a) => isErrorValue(lazyOrError(v(a, 'value')))),
  ISLOGICAL: def('ISLOGICAL', ['value'], {}, (a) => typeof v(a, 'value') === 'boolean'),
  ISNA: def('ISNA', ['value'], {}, (a) => {
    const x = v(a, 'value');
    return typeof x === 'number' && Number.isNaN(x);
  }),
  ISNONTEXT: def('ISNONTEXT', ['value'], {}, (a) => !isText(v(a, 'value'))),
  ISNUMBER: def('ISNUMBER', ['value'], {}, (a) => isNumber(v(a, 'value'))),
  ISREF: def('ISREF', ['value'], {}, (a) => isRecord(v(a, 'value'))),
  ISREFLIST: def('ISREFLIST', ['value'], {}, (a) => isRecordSet(v(a, 'value'))),
  ISTEXT: def('ISTEXT', ['value'], {}, (a) => isText(v(a, 'value'))),
  ISEMAIL: def('ISEMAIL', ['value'], {}, (a) => EMAIL.exec('match', strArg(v(a, 'value'), 'ISEMAIL')) !== null),
  ISURL: def('ISURL', ['value'], {}, (a) => {
    const s = pyStrip(strArg(v(a, 'value'), 'ISURL'));
    if (s.includes(' ')) return false;
    return URL.exec('match', s) !== null;
  }),
  N: def('N', ['value'], {}, (a) => {
    const x = v(a, 'value');
    // Grist's docstring gives N(True) == 1 (its code returns True): we follow the documented result.
    if (typeof x === 'boolean') return x ? 1n : 0n;
    if (isNumber(x)) return x;
    if (x instanceof PyDate) return dateToXl(x);
    return 0n;
  }),
  NA: def('NA', [], {}, () => NaN),
};
