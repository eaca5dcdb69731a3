/**
 * Python's text of numbers, as both the document layer (Text conversion, alt-text, list cells) and
 * the formula engine (`str`, `repr`, `%`) need it: one implementation, checked against CPython
 * (test/pyvalues.test.ts).
 */

/** `repr(float)` (also `str(float)`): shortest round-tripping digits in Python's layout. */
export function floatRepr(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  // JS and Python pick the same shortest digits; only the layout differs. Python writes a decimal
  // exponent from -4 to 15 in positional form and always shows a fraction ('.0').
  const [mant, expStr] = Math.abs(v).toExponential().split('e');
  const exp = Number(expStr);
  const digits = mant.replace('.', '');
  const sign = v < 0 ? '-' : '';
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
    if (digits.length > exp + 1) return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
    return `${sign}${digits}${'0'.repeat(exp + 1 - digits.length)}.0`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

/** `"%.15g" % v`. */
export function formatG15(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  const [mant, expStr] = v.toExponential(14).split('e');
  const exp = Number(expStr);
  const strip = (s: string) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  // toFixed drops the sign of -0 ('%.15g' % -0.0 is '-0').
  if (exp >= -4 && exp < 15) return (Object.is(v, -0) ? '-' : '') + strip(v.toFixed(Math.max(0, 14 - exp)));
  return `${strip(mant)}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

/**
 * `str()` of a number held as a JS number. `isFloat` true: a float (Numeric, Date... columns);
 * false: a Python int when integral (Int columns); left out: as Grist's marshalling hands JSON
 * numbers to its engine, 32-bit integers as ints and every other number (-0 included) as a float.
 */
export function pyNumberStr(v: number, isFloat?: boolean): string {
  const isInt =
    isFloat === undefined ? v === (v | 0) && !Object.is(v, -0) : !isFloat && Number.isInteger(v) && Math.abs(v) < 1e21;
  return isInt ? BigInt(v).toString() : floatRepr(v);
}
