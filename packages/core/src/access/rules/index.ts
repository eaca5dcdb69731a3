/**
 * The predicate-formula language of Grist's access rules: parsing a formula into the JSON Grist
 * stores in `_grist_ACLRules.aclFormulaParsed`, and compiling that JSON into a predicate.
 */
export {PredicateFormulaError} from './errors.js';
export {
  floatRepr,
  jsonString,
  type ParsedPredicateFormula,
  parsePredicateFormula,
  parsePredicateFormulaValue,
  readParsedFormula,
} from './parse.js';
export {
  type CompiledPredicate,
  compilePredicate,
  decodeCell,
  isNeedRowData,
  NEED_ROW_DATA,
  NeedRowData,
  PredicateEvalError,
  type PredicateInput,
  type RowView,
} from './evaluate.js';
