/**
 * Table and column identifiers, as the data engine picks them (sandbox/grist/identifiers.py):
 * sanitised to [A-Za-z0-9_], de-duplicated case-insensitively with a numeric suffix.
 */
import {shownValue} from '../base/index.js';
import {KEYWORDS} from '@gristlite/formula';

// Python 3's keyword.kwlist (the engine also refuses None/True/False, which it contains): the
// formula front end's list.
export const PY_KEYWORDS: ReadonlySet<string> = KEYWORDS;

function sanitize(ident: string | null | undefined, prefix: string, capitalize: boolean): string {
  // Callers pass checked strings; anything else reads as JavaScript shows it, never through its own methods.
  let s = ident == null ? '' : typeof ident === 'string' ? ident : shownValue(ident);
  // NFKD, then drop combining marks, so that 'é' becomes 'e' rather than '_'.
  s = s.normalize('NFKD').replace(/\p{M}/gu, '');
  s = s.replace(/[^a-zA-Z0-9_]+/g, '_').replace(/^_+/, '');
  if (/^[0-9_]/.test(s)) {
    s = prefix + s;
  }
  if (!s) {
    return s;
  }
  if (capitalize) {
    s = s[0].toUpperCase() + s.slice(1);
  }
  while (PY_KEYWORDS.has(s)) {
    s = prefix + s;
  }
  return s;
}

function upperSet(avoid: Iterable<string>): Set<string> {
  return new Set([...avoid].map((a) => a.toUpperCase()));
}

function addSuffix(base: string, avoid: Set<string>, next: number): string {
  const stem = /\d$/.test(base) ? base + '_' : base;
  for (let n = next; ; n++) {
    const ident = `${stem}${n}`;
    if (!avoid.has(ident.toUpperCase())) {
      return ident;
    }
  }
}

function maybeAddSuffix(ident: string, avoid: Set<string>): string {
  return avoid.has(ident.toUpperCase()) ? addSuffix(ident, avoid, 2) : ident;
}

/** A table id for a suggested name (null or invalid gives Table1, Table2, ...). */
export function pickTableIdent(ident: string | null | undefined, avoid: Iterable<string>): string {
  const avoidSet = upperSet(avoid);
  let s = sanitize(ident, 'T', true);
  // SQLite reserves table names starting with sqlite_ (any case): "object name reserved for internal use".
  if (/^sqlite_/i.test(s)) {
    s = 'T' + s;
  }
  return s ? maybeAddSuffix(s, avoidSet) : addSuffix('Table', avoidSet, 1);
}

/** A column id for a suggested name (null or invalid gives A, B, ..., Z, AA, AB, ...). */
export function pickColIdent(ident: string | null | undefined, avoid: Iterable<string>): string {
  const avoidSet = upperSet(avoid);
  const s = sanitize(ident, 'c', false);
  return s ? maybeAddSuffix(s, avoidSet) : genLetters(avoidSet);
}

/** Column ids for a list of suggestions, unique among themselves and against `avoid`. */
export function pickColIdentList(idents: Array<string | null | undefined>, avoid: Iterable<string>): string[] {
  const avoidSet = upperSet(avoid);
  return idents.map((ident) => {
    const picked = pickColIdent(ident, avoidSet);
    avoidSet.add(picked.toUpperCase());
    return picked;
  });
}

function genLetters(avoid: Set<string>): string {
  for (let length = 1; ; length++) {
    const total = 26 ** length;
    for (let i = 0; i < total; i++) {
      let s = '';
      for (let n = i, k = 0; k < length; k++, n = Math.floor(n / 26)) {
        s = String.fromCharCode(65 + (n % 26)) + s;
      }
      if (!avoid.has(s)) {
        return s;
      }
    }
  }
}

/** An identifier quoted for SQL. */
export function quoteIdent(ident: string): string {
  return `"${ident.replace(/"/g, '""')}"`;
}
