/** A page of a table's history with its cursor sealed as record pages' are (cursor.ts; D122). */
import type {CursorCodec, GristDoc} from '../doc/index.js';
import {BadRequest} from '../base/index.js';
import type {HistoryEntry} from '../doc/history/index.js';

/** What a history cursor is bound to: the document, the table and the record asked for. */
function historyBinding(docId: string, tableId: string, rowId: number | undefined): string {
  return JSON.stringify(['history', docId, tableId, rowId ?? null]);
}

/** One page: `cursor` is the previous page's `next`; the answer's `next` is null on the last page. */
export function historyPage(
  cursors: CursorCodec,
  docId: string,
  grist: GristDoc,
  tableIdIn: string,
  q: {rowId?: number; limit?: number; cursor?: string},
): {changes: HistoryEntry[]; next: string | null} {
  const tableId = grist.resolveTableId(tableIdIn);
  const binding = historyBinding(docId, tableId, q.rowId);
  let after: {n: number; r: number} | undefined;
  if (q.cursor !== undefined) {
    if (q.cursor === '') throw new BadRequest('Invalid cursor: it is empty');
    const pos = cursors.open(binding, q.cursor);
    if (!Number.isSafeInteger(pos.n) || !Number.isSafeInteger(pos.r)) {
      throw new BadRequest('Invalid cursor: follow the next cursor of the previous page with the same query');
    }
    after = {n: pos.n as number, r: pos.r as number};
  }
  const page = grist.tableHistory(tableId, {rowId: q.rowId, limit: q.limit, after});
  return {changes: page.changes, next: page.next ? cursors.seal(binding, {...page.next}) : null};
}
