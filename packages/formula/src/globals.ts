/**
 * The names a formula sees: tables (which shadow functions of the same name, as in Grist's
 * usercode), builtins and the library, auto-imported modules, and the Grist functions that need
 * the engine (PEEK, CONTAINS, RECORD, VLOOKUP, PREVIOUS, NEXT, RANK).
 */
import {type Kwargs, PyCallable, PyException, type Value, hashKey, raise, truthy} from './values.js';
import {Record, UserTable, recordToDict} from './records.js';
import {getattr} from './methods.js';
import {findModule} from './library.js';
import {Contains} from './indexes.js';
import {groupPosition} from './reads.js';
import type {EngineState} from './state.js';

export function resolveGlobal(s: EngineState, name: string): Value | undefined {
  // Tables are defined after `from functions import *` in Grist's usercode: they shadow functions (table T vs T()).
  const t = s.tables.get(name);
  if (t) return (t.userTable ??= new UserTable(s.host, name));
  const b = s.builtins.get(name);
  if (b !== undefined) return b;
  const m = findModule(s.library, name);
  if (m !== undefined && AUTO_IMPORTED.has(name)) return m;
  return undefined;
}

export function importModule(s: EngineState, name: string): Value {
  const m = findModule(s.library, name);
  if (m === undefined) {
    throw new PyException(KNOWN_MODULES.has(name) ? 'ImportError' : 'ModuleNotFoundError', `No module named '${name}'`);
  }
  return m;
}

/** Grist functions that need the engine: PEEK, RECORD, VLOOKUP, PREVIOUS, NEXT, RANK. */
export function gristFunctions(s: EngineState): {[name: string]: PyCallable} {
  const fns: {[name: string]: PyCallable} = {};
  fns.PEEK = new PyCallable('PEEK', (args) => {
    const thunk = args[0];
    const cur = s.cur;
    if (!cur) return typeof thunk === 'object' && thunk instanceof PyCallable ? thunk.call([], null) : thunk;
    const saved = cur.track;
    cur.track = false;
    try {
      return thunk instanceof PyCallable ? thunk.call([], null) : thunk;
    } finally {
      cur.track = saved;
    }
  });
  fns.CONTAINS = new PyCallable('CONTAINS', (args, kw) => {
    const matchEmpty = kw && 'match_empty' in kw ? kw.match_empty : args.length > 1 ? args[1] : undefined;
    if (matchEmpty !== undefined) hashKey(matchEmpty); // TypeError for unhashable, as Grist checks
    return new Contains(args[0] ?? null, matchEmpty);
  });
  fns.RECORD = new PyCallable('RECORD', (args, kw) => {
    const expand = kw?.expand_refs ?? args[2] ?? 0n;
    const iso = kw?.dates_as_iso ?? args[1] ?? false;
    return recordToDict(s.host, args[0], truthy(iso), Number(expand));
  });
  fns.VLOOKUP = new PyCallable('VLOOKUP', (args, kw) => {
    const table = args[0];
    if (!(table instanceof UserTable)) raise('TypeError', 'VLOOKUP requires a table');
    return getattr(table, 'lookupOne') instanceof PyCallable
      ? (getattr(table, 'lookupOne') as PyCallable).call([], kw)
      : null;
  });
  // order_by is required (keyword-only, no default, as in Grist's prevnext.py); None is the
  // table's manual order, an empty spec that the sort completes with manualSort.
  const orderOf = (name: string, kw: Kwargs | null | undefined): Value => {
    if (!kw || !('order_by' in kw))
      raise('TypeError', `${name}() missing 1 required keyword-only argument: 'order_by'`);
    return kw!.order_by ?? [];
  };
  const neighbor = (name: string, delta: number) =>
    new PyCallable(name, (args, kw) => {
      const orderBy = orderOf(name, kw);
      const rec = args[0];
      if (!(rec instanceof Record)) raise('TypeError', `${name}() requires a record`);
      const r = rec as Record;
      const groupBy = kw?.group_by ?? null;
      const {rows, index: i} = groupPosition(s, r, groupBy, orderBy);
      const j = i + delta;
      if (i < 0 || j < 0 || j >= rows.length) return new Record(s.host, r.tableId, 0);
      // PREVIOUS: the rows before it are likely read too (a running total), computed first in order.
      return new Record(s.host, r.tableId, rows[j], undefined, undefined, delta < 0 ? {rows, end: j} : undefined);
    });
  fns.PREVIOUS = neighbor('PREVIOUS', -1);
  fns.NEXT = neighbor('NEXT', 1);
  fns.RANK = new PyCallable('RANK', (args, kw) => {
    const orderBy = orderOf('RANK', kw);
    const rec = args[0];
    if (!(rec instanceof Record)) raise('TypeError', 'RANK() requires a record');
    const order = kw?.order ?? 'asc';
    const {rows, index: i} = groupPosition(s, rec as Record, kw?.group_by ?? null, orderBy);
    if (i < 0) return null;
    return BigInt(String(order).toLowerCase() === 'desc' ? rows.length - i : i + 1);
  });
  return fns;
}

/** Modules formulas see without importing (Grist's generated usercode imports datetime, math, re). */
const AUTO_IMPORTED = new Set(['datetime', 'math', 're']);
/** Modules Grist provides to formulas (an import of one not yet available is an ImportError). */
const KNOWN_MODULES = new Set([
  'datetime',
  'math',
  're',
  'time',
  'json',
  'itertools',
  'functools',
  'statistics',
  'collections',
  'random',
  'string',
  'decimal',
  'dateutil',
  'dateutil.parser',
  'dateutil.relativedelta',
  'dateutil.tz',
  'six',
  'moment',
  'unicodedata',
  'operator',
  'calendar',
]);
