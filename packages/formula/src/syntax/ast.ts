/**
 * The one syntax tree of Python 3.11 as Grist's formulas and access-rule conditions use it. The
 * formula compiler runs it; the rule writer turns it into Grist's `aclFormulaParsed` lists.
 *
 * Every expression node carries CPython's `lineno` and `col_offset` (`line`, `bcol`: UTF-8
 * bytes), which the rule writer reports ("Unsupported syntax at 1:5"), including CPython's quirks
 * (a generator expression that is a call's only argument starts at the call's `(`). `pos`/`end`
 * are offsets in the JavaScript source string, where a rename rewrites text: for `attr` they span
 * the attribute's name, for `name`, `const` and `fstr` the node itself.
 */

export interface At {
  line: number;
  /** 0-based column in UTF-8 bytes (CPython's col_offset). */
  bcol: number;
}

export type ConstValue = bigint | number | string | boolean | null;

/** An expression of the one syntax tree, with its position (`At`). */
export type Expr = At &
  (
    | {
        k: 'const';
        /** ints as bigint, floats as number; for an imaginary literal its imaginary part. */
        value: ConstValue;
        pos: number;
        end: number;
        /** Literals with no value of their own here: bytes (value: the text), complex, `...` (value null). */
        lit?: 'bytes' | 'complex' | 'ellipsis';
        /**
         * Unary minuses folded into a number (so `-1` is a constant, as for CPython's optimizer):
         * how many, for the rule writer, to which `-1` is still a UnaryOp (at this node's position).
         */
        negated?: number;
      }
    | {k: 'name'; id: string; pos: number; end: number; dollar?: boolean}
    /** `$name` reads as `rec.name` with `dollar` set (obj is the name `rec` at the `$`). */
    | {k: 'attr'; obj: Expr; name: string; pos: number; end: number; dollar?: boolean}
    | {k: 'sub'; obj: Expr; index: Expr}
    | {k: 'slice'; lo: Expr | null; hi: Expr | null; step: Expr | null}
    | {k: 'call'; fn: Expr; args: Arg[]}
    | {k: 'bin'; op: BinOp; l: Expr; r: Expr}
    | {k: 'unary'; op: '-' | '+' | '~'; v: Expr}
    | {k: 'not'; v: Expr}
    | {k: 'and' | 'or'; vals: Expr[]}
    | {k: 'cmp'; ops: CmpOp[]; vals: Expr[]}
    | {k: 'ifexp'; test: Expr; body: Expr; orelse: Expr}
    | {k: 'lambda'; params: Param[]; body: Expr}
    | {k: 'list' | 'tuple' | 'set'; elts: Expr[]}
    | {k: 'dict'; keys: Array<Expr | null>; values: Expr[]}
    | {k: 'listcomp' | 'setcomp' | 'genexp'; elt: Expr; gens: Gen[]}
    | {k: 'dictcomp'; key: Expr; value: Expr; gens: Gen[]}
    | {k: 'star'; v: Expr}
    | {k: 'walrus'; target: string; value: Expr}
    | {k: 'await'; v: Expr}
    | {k: 'fstr'; parts: FPart[]; pos: number; end: number}
  );

export type BinOp = '+' | '-' | '*' | '/' | '//' | '%' | '@' | '**' | '|' | '^' | '&' | '<<' | '>>';
export type CmpOp = '<' | '>' | '==' | '>=' | '<=' | '!=' | 'in' | 'not in' | 'is' | 'is not';

export type FPart = string | {expr: Expr; conv: string | null; spec: Expr | null};

export interface Arg {
  kind: 'pos' | 'star' | 'kw' | 'dstar';
  name?: string;
  value: Expr;
  /** For a keyword argument: its name's offsets. */
  pos?: number;
  end?: number;
  /** For `*value`: where the `*` is (CPython's Starred node). */
  at?: At;
}

export interface Param {
  name: string;
  kind: 'normal' | 'star' | 'dstar' | 'kwonly';
  def?: Expr;
}

export interface Gen {
  target: Expr;
  iter: Expr;
  ifs: Expr[];
}

export interface Handler {
  type: Expr | null;
  name: string | null;
  body: Stmt[];
}

export type Stmt = {line: number} & (
  | {k: 'expr'; v: Expr}
  | {k: 'assign'; targets: Expr[]; value: Expr}
  | {k: 'augassign'; target: Expr; op: string; value: Expr}
  | {k: 'annassign'; target: Expr; value: Expr | null}
  | {k: 'if'; test: Expr; body: Stmt[]; orelse: Stmt[]}
  | {k: 'for'; target: Expr; iter: Expr; body: Stmt[]; orelse: Stmt[]}
  | {k: 'while'; test: Expr; body: Stmt[]; orelse: Stmt[]}
  | {k: 'break'}
  | {k: 'continue'}
  | {k: 'pass'}
  | {k: 'return'; v: Expr | null}
  | {k: 'def'; name: string; params: Param[]; body: Stmt[]; decorators: Expr[]}
  | {k: 'try'; body: Stmt[]; handlers: Handler[]; orelse: Stmt[]; final: Stmt[]}
  | {k: 'raise'; exc: Expr | null; cause: Expr | null}
  | {k: 'assert'; test: Expr; msg: Expr | null}
  | {k: 'del'; targets: Expr[]}
  | {k: 'global' | 'nonlocal'; names: string[]}
  | {k: 'import'; names: Array<[string, string | null]>}
  | {k: 'from'; module: string; names: Array<[string, string | null]>}
  /** A statement parsed but not run by gristlite (`with`, `class`, `async ...`): what it is. */
  | {k: 'unsupported'; what: string}
);
