/**
 * Grist's permission bits and how rules combine them (grist-core ACLPermissions.ts and
 * PermissionInfo.ts, reimplemented). A rule's text is `[+bits][-bits]` over C R U D S, or `all` /
 * `none`; for each bit the first matching rule that sets it wins. Without a row, a rule that needs
 * one (`rec.X`) can only say "for some rows": its bits become `allowSome` / `denySome`, and a bit
 * that is neither settled allow nor deny for every row is `mixed` (decided row by row).
 */
import {BadRequest} from '../../base/index.js';

/** One permission: create, read, update, delete, or schemaEdit (S). */
export type Bit = 'create' | 'read' | 'update' | 'delete' | 'schemaEdit';
export const BITS: readonly Bit[] = ['create', 'read', 'update', 'delete', 'schemaEdit'];
const LETTERS: Record<string, Bit> = {C: 'create', R: 'read', U: 'update', D: 'delete', S: 'schemaEdit'};

/** A bit's state while rules are applied; `undefined` is "no rule said". */
export type BitState = 'allow' | 'deny' | 'allowSome' | 'denySome' | 'mixed' | undefined;
/** A bit's final answer: settled for every row, or to be decided per row. */
export type Answer = 'allow' | 'deny' | 'mixed';

/** What one rule sets: `+` bits allowed, `-` bits denied. */
export interface RulePermissions {
  allow: ReadonlySet<Bit>;
  deny: ReadonlySet<Bit>;
}

/**
 * Parses Grist's permission text (`+R-U`, `all`, `none`, `""`): a sign, then the letters it
 * applies to, a later mention of a letter overriding an earlier one. Bad text answers 400 in
 * Grist's words (`Invalid permissions specification "..."`, the text after alias expansion).
 */
export function parsePermissions(text: string): RulePermissions {
  const expanded = text === 'all' ? '+CRUDS' : text === 'none' ? '-CRUDS' : text;
  const value = new Map<Bit, 'allow' | 'deny'>();
  let sign: 'allow' | 'deny' | null = null;
  for (const ch of expanded) {
    if (ch === '+') sign = 'allow';
    else if (ch === '-') sign = 'deny';
    else if (sign === null || !Object.hasOwn(LETTERS, ch)) {
      throw new BadRequest(`Invalid permissions specification ${JSON.stringify(expanded)}`);
    } else value.set(LETTERS[ch], sign);
  }
  const allow = new Set<Bit>();
  const deny = new Set<Bit>();
  for (const [bit, v] of value) (v === 'allow' ? allow : deny).add(bit);
  return {allow, deny};
}

/** Keeps only the bits a resource kind may set (tables: CRUD; columns: RU; the document: all). */
export function restrictBits(p: RulePermissions, kept: ReadonlySet<Bit>): RulePermissions {
  return {
    allow: new Set([...p.allow].filter((b) => kept.has(b))),
    deny: new Set([...p.deny].filter((b) => kept.has(b))),
  };
}

/** Applies one rule's bits to a bit's state; `some` when the rule matched only "for some rows". */
export function applyBit(state: BitState, set: 'allow' | 'deny', some: boolean): BitState {
  if (state === 'allow' || state === 'deny' || state === 'mixed') return state;
  if (!some) {
    // A later definite answer settles the rows no earlier "some" rule decided.
    if (state === undefined) return set;
    if (state === 'allowSome') return set === 'allow' ? 'allow' : 'mixed';
    return set === 'deny' ? 'deny' : 'mixed';
  }
  const s: BitState = set === 'allow' ? 'allowSome' : 'denySome';
  if (state === undefined || state === s) return s;
  return 'mixed';
}

/** The final answer of a bit once every rule (the built-in ones last) has been applied. */
export function settle(state: BitState): Answer {
  if (state === 'allow' || state === 'deny') return state;
  if (state === undefined) return 'deny';
  // "allowSome" with nothing after it: the remaining rows are denied (and vice versa).
  return 'mixed';
}

/** Combines the answers of several parts (columns of a table): all alike, or mixed. */
export function mergeAnswers(answers: Iterable<Answer>): Answer {
  let out: Answer | null = null;
  for (const a of answers) {
    if (out === null) out = a;
    else if (out !== a) return 'mixed';
  }
  return out ?? 'deny';
}
