/** The tree of a parsed Python expression (the part of Python's `ast` that Grist's converter sees). */

/** A constant's value as Python holds it. */
export type PyConst =
  | {t: 'int'; v: bigint}
  | {t: 'float'; v: number}
  | {t: 'str'; v: string}
  | {t: 'bool'; v: boolean}
  | {t: 'none'}
  | {t: 'complex'}
  | {t: 'bytes'}
  | {t: 'ellipsis'};

export interface Pos {
  line: number;
  /** 0-based column in UTF-8 bytes (Python's `col_offset`). */
  bcol: number;
}

export interface Keyword {
  /** null for `**value`. */
  arg: string | null;
  value: PyNode;
}

export type PyNode = Pos &
  (
    | {k: 'Name'; id: string}
    | {k: 'Constant'; value: PyConst}
    | {k: 'Attribute'; value: PyNode; attr: string}
    | {k: 'BoolOp'; op: 'And' | 'Or'; values: PyNode[]}
    | {k: 'BinOp'; op: string; left: PyNode; right: PyNode}
    | {k: 'UnaryOp'; op: string; operand: PyNode}
    | {k: 'Compare'; left: PyNode; ops: string[]; comparators: PyNode[]}
    | {k: 'List' | 'Tuple'; elts: PyNode[]}
    | {k: 'Call'; func: PyNode; args: PyNode[]; keywords: Keyword[]}
    /** Any other expression (Subscript, IfExp, Lambda, Dict, Set, comprehensions, Starred, ...). */
    | {k: 'Other'; what: string}
  );
