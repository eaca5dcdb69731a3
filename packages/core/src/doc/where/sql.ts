/**
 * SQL conditions with bound parameters, folded as they are built: `and`, `or` and `not` of the
 * constants `1` and `0` are decided here, so a translation that knows the answer for every row
 * writes no SQL for it. Every condition this folder builds is 0 or 1 for every row, never NULL
 * (each comparison is guarded by the storage class of its operands), so NOT is Boolean negation.
 */

export interface Sql {
  readonly sql: string;
  readonly params: readonly unknown[];
}

export const TRUE: Sql = {sql: '1', params: []};
export const FALSE: Sql = {sql: '0', params: []};

export function sql(text: string, ...params: unknown[]): Sql {
  return {sql: text, params};
}

export function and(...parts: Sql[]): Sql {
  const kept: Sql[] = [];
  for (const p of parts) {
    if (p.sql === '0') return FALSE;
    if (p.sql !== '1') kept.push(p);
  }
  if (!kept.length) return TRUE;
  if (kept.length === 1) return kept[0];
  return {sql: `(${kept.map((p) => p.sql).join(' AND ')})`, params: kept.flatMap((p) => p.params)};
}

export function or(...parts: Sql[]): Sql {
  const kept: Sql[] = [];
  for (const p of parts) {
    if (p.sql === '1') return TRUE;
    if (p.sql !== '0') kept.push(p);
  }
  if (!kept.length) return FALSE;
  if (kept.length === 1) return kept[0];
  return {sql: `(${kept.map((p) => p.sql).join(' OR ')})`, params: kept.flatMap((p) => p.params)};
}

export function not(p: Sql): Sql {
  if (p.sql === '1') return FALSE;
  if (p.sql === '0') return TRUE;
  return {sql: `(NOT ${p.sql})`, params: p.params};
}

/**
 * A condition's answer for each row, as four exclusive conditions covering every row: the value
 * is truthy (`t`), falsy (`f`), raises (`e`), or SQL cannot tell (`u`: the formula engine
 * evaluates those rows). Each operation below keeps the four exact.
 */
export interface Tri {
  readonly t: Sql;
  readonly f: Sql;
  readonly e: Sql;
  readonly u: Sql;
}

export const UNKNOWN: Tri = {t: FALSE, f: FALSE, e: FALSE, u: TRUE};
export const IS_TRUE: Tri = {t: TRUE, f: FALSE, e: FALSE, u: FALSE};
export const IS_FALSE: Tri = {t: FALSE, f: TRUE, e: FALSE, u: FALSE};
export const RAISES: Tri = {t: FALSE, f: FALSE, e: TRUE, u: FALSE};

/** A Boolean known in SQL for every row. */
export function decided(cond: Sql): Tri {
  return {t: cond, f: not(cond), e: FALSE, u: FALSE};
}

export function notTri(a: Tri): Tri {
  return {t: a.f, f: a.t, e: a.e, u: a.u};
}

/** Python's `a and b and ...` in a Boolean context (the first falsy value, or the last). */
export function andTri(parts: Tri[]): Tri {
  const e: Sql[] = [];
  const f: Sql[] = [];
  const u: Sql[] = [];
  let prefix: Sql = TRUE;
  for (const p of parts) {
    e.push(and(prefix, p.e));
    f.push(and(prefix, p.f));
    u.push(and(prefix, p.u));
    prefix = and(prefix, p.t);
  }
  return {t: prefix, f: or(...f), e: or(...e), u: or(...u)};
}

/** Python's `a or b or ...` in a Boolean context (the first truthy value, or the last). */
export function orTri(parts: Tri[]): Tri {
  const e: Sql[] = [];
  const t: Sql[] = [];
  const u: Sql[] = [];
  let prefix: Sql = TRUE;
  for (const p of parts) {
    e.push(and(prefix, p.e));
    t.push(and(prefix, p.t));
    u.push(and(prefix, p.u));
    prefix = and(prefix, p.f);
  }
  return {t: or(...t), f: prefix, e: or(...e), u: or(...u)};
}

/** `body if test else orelse` in a Boolean context. */
export function ifTri(test: Tri, body: Tri, orelse: Tri): Tri {
  return {
    t: or(and(test.t, body.t), and(test.f, orelse.t)),
    f: or(and(test.t, body.f), and(test.f, orelse.f)),
    e: or(test.e, and(test.t, body.e), and(test.f, orelse.e)),
    u: or(test.u, and(test.t, body.u), and(test.f, orelse.u)),
  };
}

/** `tri` where `when` holds, nothing elsewhere. */
export function within(when: Sql, tri: Tri): Tri {
  return {t: and(when, tri.t), f: and(when, tri.f), e: and(when, tri.e), u: and(when, tri.u)};
}

/** The union of answers of exclusive cases (which together cover every row). */
export function anyOf(parts: Tri[]): Tri {
  return {
    t: or(...parts.map((p) => p.t)),
    f: or(...parts.map((p) => p.f)),
    e: or(...parts.map((p) => p.e)),
    u: or(...parts.map((p) => p.u)),
  };
}
