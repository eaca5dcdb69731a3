/** Recalculation: dirty cells computed from an explicit work stack, their values stored, changes kept. */
import {PyException} from './values.js';
import type {ColData} from './tables.js';

export class NeedCompute {
  /**
   * `rows`: every one of these cells of the column is needed (a lookup's key column, a column read
   * from a RecordSet), computed in one go rather than one per re-run of the waiting cell.
   */
  constructor(
    readonly col: ColData,
    readonly row: number,
    readonly rows?: number[],
  ) {}
}

export const CIRCULAR = new PyException('CircularRefError', 'Circular Reference');
