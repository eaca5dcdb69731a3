/**
 * What the workspace's own packages use beyond the public entry (core's `where` conditions: the
 * records a host builds, the parsed body of a formula, constants' shapes). Not a supported API.
 * @module
 */
export {
  BUDGET_ERRORS,
  type ConditionOptions,
  type ConstantShape,
  constantShape,
  type RowCondition,
} from './conditions.js';
export {MarshalWriter} from './cells/marshal.js';
export {COLUMN_LOOP_MIN} from './column-loop.js';
export {parseFormulaBody} from './grist.js';
export {type RecordHost, Record, RecordSet, UserTable} from './records.js';
export type {Stmt} from './syntax/index.js';
export {PyTuple, truthy} from './values.js';
