// Interim evaluator (replaced by the full one): enough of Grist's PredicateFormula semantics to wire rules.
import {BadRequest} from '../../errors.js';

/** A row as rules read it. */
export interface RowView {
  /** A cell's value (undefined for an unknown column). */
  get(colId: string): unknown;
}
/** What a rule formula reads: `user`, and `rec`/`newRec` when a row is known. */
export interface PredicateInput {
  user: Record<string, unknown>;
  rec?: RowView | null;
  newRec?: RowView | null;
}
export const NEED_ROW_DATA = Symbol('NEED_ROW_DATA');
export class NeedRowData extends Error {
  readonly code = 'NEED_ROW_DATA';
}
export function isNeedRowData(e: unknown): boolean {
  return e instanceof NeedRowData;
}

type Fn = (input: PredicateInput) => unknown;
export function compilePredicate(parsed: unknown): Fn {
  const node = parsed as unknown[];
  const [op, ...args] = node;
  const sub = () => args.map((a) => compilePredicate(a));
  switch (op) {
    case 'And': {
      const p = sub();
      return (i) => p.every((f) => f(i));
    }
    case 'Or': {
      const p = sub();
      return (i) => p.some((f) => f(i));
    }
    case 'Not': {
      const [a] = sub();
      return (i) => !a(i);
    }
    case 'Eq':
    case 'Is': {
      const [a, b] = sub();
      return (i) => a(i) === b(i);
    }
    case 'NotEq':
    case 'IsNot': {
      const [a, b] = sub();
      return (i) => a(i) !== b(i);
    }
    case 'Lt': {
      const [a, b] = sub();
      return (i) => (a(i) as number) < (b(i) as number);
    }
    case 'LtE': {
      const [a, b] = sub();
      return (i) => (a(i) as number) <= (b(i) as number);
    }
    case 'Gt': {
      const [a, b] = sub();
      return (i) => (a(i) as number) > (b(i) as number);
    }
    case 'GtE': {
      const [a, b] = sub();
      return (i) => (a(i) as number) >= (b(i) as number);
    }
    case 'In':
    case 'NotIn': {
      const [a, b] = sub();
      const inn = (x: unknown, y: unknown) =>
        Array.isArray(y) ? y.includes(x) : typeof x === 'string' && typeof y === 'string' ? y.includes(x) : false;
      return op === 'In' ? (i) => inn(a(i), b(i)) : (i) => !inn(a(i), b(i));
    }
    case 'Add': {
      const [a, b] = sub();
      return (i) => (a(i) as number) + (b(i) as number);
    }
    case 'Const':
      return () => args[0];
    case 'List': {
      const p = sub();
      return (i) => p.map((f) => f(i));
    }
    case 'Comment':
      return compilePredicate(args[0]);
    case 'Name': {
      const name = args[0] as string;
      const consts: Record<string, string> = {EDITOR: 'editors', OWNER: 'owners', VIEWER: 'viewers'};
      if (Object.hasOwn(consts, name)) return () => consts[name];
      if (name === 'rec' || name === 'newRec') return (i) => i[name];
      if (name === 'user') return (i) => i.user;
      throw new BadRequest(`Unknown variable '${name}'`);
    }
    case 'Attr': {
      const a = compilePredicate(args[0]);
      const attr = args[1] as string;
      return (i) => {
        const o = a(i);
        if (o === undefined) throw new NeedRowData();
        if (o === null) throw new Error(`No value for '${attr}'`);
        if (typeof (o as RowView).get === 'function') return (o as RowView).get(attr);
        return Object.hasOwn(o as object, attr) ? (o as Record<string, unknown>)[attr] : undefined;
      };
    }
    default:
      throw new BadRequest(`Unknown node ${String(op)}`);
  }
}
