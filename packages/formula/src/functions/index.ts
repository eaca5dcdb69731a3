/**
 * Grist's function library: every function Grist implements that needs no access to records or
 * tables (those, such as PREVIOUS, NEXT, RANK, VLOOKUP, PEEK, RECORD, CONTAINS and REQUEST, belong
 * to the interpreter). See docs/formulas.md, "Functions".
 */
import type {PyCallable} from '../values.js';
import {mathFunctions} from './math.js';
import {textFunctions} from './text.js';
import {dateFunctions} from './date.js';
import {infoFunctions} from './info.js';
import {statsFunctions} from './stats.js';
import {logicalFunctions} from './logical.js';
import {scheduleFunctions} from './schedule.js';
import {lookupFunctions} from './lookup.js';

/** Grist's function library by name (`SUM`, `DATEADD`, ...), as formulas see it. */
export const gristFunctions: Record<string, PyCallable> = {
  ...mathFunctions,
  ...textFunctions,
  ...dateFunctions,
  ...infoFunctions,
  ...statsFunctions,
  ...logicalFunctions,
  ...scheduleFunctions,
  ...lookupFunctions,
};

export {setDocTimezone, docTimezone} from './date.js';
export {setDocUrl} from './lookup.js';
