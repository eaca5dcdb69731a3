/**
 * Grist's formula compilation (what grist-core's codebuilder does before Python compiles a
 * formula): dedent, `$col` -> `rec.col` (the lexer does it outside strings and comments), the last
 * expression statement becomes the return value, an empty formula returns the column default,
 * a body with no return is a SyntaxError, as is assigning to `rec` or to `$col`. A syntax error
 * becomes an exception raised by every evaluation, so every cell of the column shows it.
 */
import {PyException, type Value} from './values.js';
import {type Expr, PySyntaxError, type Stmt, parseModule} from './syntax/index.js';
import {type CompiledBody, type Globals, compileFunctionBody} from './compiler.js';

export interface CompiledFormula {
  /** Evaluates the formula for a record; throws PyException for errors. */
  run(rec: Value, table: Value): Value;
  /** The syntax error every cell shows, if the formula does not compile. */
  syntaxError: PyException | null;
  /** Whether the body is empty (the column default is returned). */
  empty: boolean;
}

/** textwrap.dedent, as Grist applies it to formula text. */
export function dedent(text: string): string {
  const lines = text.split('\n');
  let prefix: string | null = null;
  for (const line of lines) {
    if (/^[ \t]*$/.test(line)) continue;
    const ws = /^[ \t]*/.exec(line)![0];
    if (prefix === null) prefix = ws;
    else {
      let i = 0;
      while (i < prefix.length && i < ws.length && prefix[i] === ws[i]) i++;
      prefix = prefix.slice(0, i);
    }
  }
  if (!prefix) return lines.map((l) => (/^[ \t]+$/.test(l) ? '' : l)).join('\n');
  return lines.map((l) => (/^[ \t]*$/.test(l) ? '' : l.slice(prefix!.length))).join('\n');
}

/** Parses formula text as Grist does; throws the SyntaxError the cells will show. */
export function parseFormula(text: string): Stmt[] {
  try {
    return parseFormulaBody(text);
  } catch (e) {
    if (e instanceof PySyntaxError) throw gristSyntaxError(e);
    throw e;
  }
}

/**
 * `parseFormula` with CPython's syntax errors as the front end raises them (a `PySyntaxError`,
 * with its line and column), for callers that word them themselves (a `where` condition); Grist's
 * own refusals (no `return`, assigning to `rec` or to a column) are PyExceptions as in a cell.
 */
export function parseFormulaBody(text: string): Stmt[] {
  const body = parseModule(dedent(text));
  if (!body.length) return body;
  const last = body[body.length - 1];
  if (last.k === 'expr') {
    body[body.length - 1] = {k: 'return', v: last.v, line: last.line};
  } else if (!hasReturn(body)) {
    let msg = "No `return` statement, and the last line isn't an expression.";
    if (last.k === 'assign') msg += ' If you want to check for equality, use `==` instead of `=`.';
    throw new PyException('SyntaxError', `${msg} (usercode, line 1)`);
  }
  checkAssignments(body);
  return body;
}

/**
 * CPython's error as Grist raises it from a formula (codebuilder: `SyntaxError(msg, ('usercode',
 * line, ...))`, of CPython's class, so an indentation error is an IndentationError), whose text is
 * `msg (usercode, line N)`. (Grist appends friendly-traceback's explanation; gristlite does not.)
 */
function gristSyntaxError(e: PySyntaxError): PyException {
  return new PyException(e.type, e.line === null ? e.msg : `${e.msg} (usercode, line ${e.line})`);
}

function hasReturn(stmts: Stmt[]): boolean {
  for (const s of stmts) {
    switch (s.k) {
      case 'return':
        return true;
      case 'if':
      case 'for':
      case 'while':
        if (hasReturn(s.body) || hasReturn(s.orelse)) return true;
        break;
      case 'try':
        if (hasReturn(s.body) || hasReturn(s.orelse) || hasReturn(s.final) || s.handlers.some((h) => hasReturn(h.body)))
          return true;
        break;
      case 'def':
        if (hasReturn(s.body)) return true;
        break;
    }
  }
  return false;
}

function checkAssignments(stmts: Stmt[]): void {
  const target = (t: Expr, line: number): void => {
    if (t.k === 'name' && t.id === 'rec') {
      throw new PyException(
        'SyntaxError',
        `Grist disallows assignment to the special variable "rec" (usercode, line ${line})`,
      );
    }
    if (t.k === 'attr' && t.obj.k === 'name' && t.obj.id === 'rec') {
      throw new PyException(
        'SyntaxError',
        `You can't assign a value to a column with \`=\`. If you mean to check for equality, use \`==\` instead. (usercode, line ${line})`,
      );
    }
    if (t.k === 'tuple' || t.k === 'list') t.elts.forEach((e) => target(e, line));
    if (t.k === 'star') target(t.v, line);
  };
  for (const s of stmts) {
    switch (s.k) {
      case 'assign':
        s.targets.forEach((t) => target(t, s.line));
        break;
      case 'augassign':
        target(s.target, s.line);
        break;
      case 'for':
        target(s.target, s.line);
        checkAssignments(s.body);
        checkAssignments(s.orelse);
        break;
      case 'if':
      case 'while':
        checkAssignments(s.body);
        checkAssignments(s.orelse);
        break;
      case 'try':
        checkAssignments(s.body);
        checkAssignments(s.orelse);
        checkAssignments(s.final);
        s.handlers.forEach((h) => checkAssignments(h.body));
        break;
    }
  }
}

/**
 * Compiles a Grist formula. `defaultValue` is what an empty formula returns (the column type's
 * default, already in the engine's value form). Never throws: syntax errors are raised by `run`.
 */
export function compileFormula(text: string, globals: Globals, defaultValue: Value): CompiledFormula {
  let body: Stmt[];
  try {
    body = parseFormula(text);
  } catch (e) {
    if (!(e instanceof PyException)) throw e;
    const err = e;
    return {
      run: () => {
        throw err;
      },
      syntaxError: err,
      empty: false,
    };
  }
  if (!body.length) return {run: () => defaultValue, syntaxError: null, empty: true};
  const compiled: CompiledBody = compileFunctionBody(body, ['rec', 'table'], globals);
  return {run: (rec, table) => compiled.run([rec, table]), syntaxError: null, empty: false};
}
