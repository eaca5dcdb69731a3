/**
 * Errors of the predicate-formula language (access-rule conditions). Every failure of parsing or
 * compiling a formula is a `PredicateFormulaError`, a `BadRequest` (HTTP 400), never a crash.
 */
import {BadRequest} from '../../base/index.js';

/**
 * A formula Grist would refuse. `excName` and `detail` are what Grist's data engine reports
 * (`SyntaxError`, `invalid syntax on line 1 col 9`); the message joins them as Grist shows them
 * (`SyntaxError invalid syntax on line 1 col 9`). For errors Grist raises while compiling a rule
 * in JavaScript (`Unknown variable 'len'`) `excName` is empty and the message is the detail.
 */
export class PredicateFormulaError extends BadRequest {
  constructor(
    readonly excName: string,
    readonly detail: string,
  ) {
    super(excName ? `${excName} ${detail}` : detail);
  }
}

/** A Python-style `SyntaxError` at a line and (1-based) column, worded as Grist words it. */
export function syntaxErrorAt(message: string, line: number | null, col: number | null): PredicateFormulaError {
  return new PredicateFormulaError('SyntaxError', `${message} on line ${line ?? 'None'} col ${col ?? 'None'}`);
}
