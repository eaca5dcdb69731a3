/**
 * Comparing a replayed answer with Grist's recorded one: every difference as the JSON path where
 * it is and both values, at the level a listed difference allows (`differences.ts`).
 */

/** One recorded answer, normalised (`normalise.ts`). */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON, text for anything else, or `{xlsx: ...}` cell values of a workbook. */
  body: unknown;
}

/**
 * How closely a step is compared: `exact` (the default), `shape` (status, headers, and the body's
 * JSON types and object keys, not its values), `status` (the status and nothing else),
 * `status-class` (2xx/4xx/5xx only), `error` (both answer an error, 4xx or 5xx, with Grist's
 * `{"error": "..."}` body: for bad input where Grist fails with a 500 or its own words and
 * gristlite gives a 4xx it explains).
 */
export type Level = 'exact' | 'shape' | 'status' | 'status-class' | 'error';

/** A difference between two answers: where, and what each side has there. */
export interface Difference {
  path: string;
  grist: unknown;
  gristlite: unknown;
}

/** The differences between Grist's answer and gristlite's at a level (none: an empty list). */
export function compareAnswers(grist: Answer, ours: Answer, level: Level = 'exact'): Difference[] {
  const out: Difference[] = [];
  if (level === 'error') {
    const isError = (a: Answer) => a.status >= 400 && typeof (a.body as {error?: unknown})?.error === 'string';
    if (!isError(grist) || !isError(ours)) out.push({path: 'status', grist: grist.status, gristlite: ours.status});
    return out;
  }
  if (level === 'status-class') {
    if (Math.floor(grist.status / 100) !== Math.floor(ours.status / 100))
      out.push({path: 'status', grist: grist.status, gristlite: ours.status});
    return out;
  }
  if (grist.status !== ours.status) out.push({path: 'status', grist: grist.status, gristlite: ours.status});
  if (level === 'status') return out;
  diff(grist.headers, ours.headers, 'headers', out, false);
  diff(grist.body, ours.body, 'body', out, level === 'shape');
  return out;
}

/** The differences between two JSON values, their paths starting at `path`. */
export function diffValues(grist: unknown, ours: unknown, path: string): Difference[] {
  const out: Difference[] = [];
  diff(grist, ours, path, out, false);
  return out;
}

function typeOf(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

function diff(a: unknown, b: unknown, path: string, out: Difference[], shapeOnly: boolean): void {
  const ta = typeOf(a);
  const tb = typeOf(b);
  if (ta !== tb) {
    out.push({path, grist: a, gristlite: b});
    return;
  }
  if (ta === 'array') {
    const xa = a as unknown[];
    const xb = b as unknown[];
    if (!shapeOnly && xa.length !== xb.length)
      out.push({path: `${path}.length`, grist: xa.length, gristlite: xb.length});
    const n = shapeOnly ? Math.min(xa.length, xb.length, 1) : Math.min(xa.length, xb.length);
    for (let i = 0; i < n; i++) diff(xa[i], xb[i], `${path}[${i}]`, out, shapeOnly);
    return;
  }
  if (ta === 'object') {
    const oa = a as Record<string, unknown>;
    const ob = b as Record<string, unknown>;
    for (const k of Object.keys(oa)) {
      if (!(k in ob)) out.push({path: `${path}.${k}`, grist: oa[k], gristlite: undefined});
      else diff(oa[k], ob[k], `${path}.${k}`, out, shapeOnly);
    }
    for (const k of Object.keys(ob))
      if (!(k in oa)) out.push({path: `${path}.${k}`, grist: undefined, gristlite: ob[k]});
    return;
  }
  if (!shapeOnly && a !== b) out.push({path, grist: a, gristlite: b});
}

/** A difference in one line: path, then both values as JSON (long values cut). */
export function describeDifference(d: Difference): string {
  const show = (v: unknown) => {
    const s = v === undefined ? '(absent)' : JSON.stringify(v);
    return s.length > 300 ? `${s.slice(0, 300)}...` : s;
  };
  return `${d.path}: Grist ${show(d.grist)}, gristlite ${show(d.gristlite)}`;
}
