/**
 * Attachments: a list of `_grist_Attachments` row ids, stored and converted as a RefList. Cells
 * display as their ids (Grist's export shows no file names).
 */
import {type CellFormatter, formatUnknown} from './base.js';
import {RefListType} from './ref.js';

export class AttachmentsType extends RefListType {
  override readonly displayTarget = null;

  constructor(type: string) {
    super(type, '_grist_Attachments');
  }

  override formatter(): CellFormatter {
    return (v) => formatUnknown(v);
  }
}
