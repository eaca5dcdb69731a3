/**
 * The syntax errors of the front end, as CPython 3.11 raises them: the exception class
 * (`SyntaxError`, or `IndentationError` for the indentation errors CPython gives that class),
 * the message, and the 1-based line and column (`SyntaxError.lineno` / `.offset`, the column in
 * code points). Callers word them: Grist's cells say `msg (usercode, line N)`, its rule writer
 * `msg on line N col C`.
 */
export class PySyntaxError extends Error {
  constructor(
    readonly type: 'SyntaxError' | 'IndentationError',
    readonly msg: string,
    readonly line: number | null,
    readonly col: number | null,
    /** The message already says where (CPython's `\N{...}` refusal here): callers add nothing. */
    readonly bare = false,
  ) {
    super(msg);
  }
}

export function syntaxError(msg: string, line: number | null, col: number | null): PySyntaxError {
  return new PySyntaxError('SyntaxError', msg, line, col);
}

export function indentationError(msg: string, line: number, col: number): PySyntaxError {
  return new PySyntaxError('IndentationError', msg, line, col);
}
