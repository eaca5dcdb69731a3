/**
 * Negative row ids in one `/apply` bundle: a record added as `-1` gets a real id, and later actions
 * of the same bundle that name `-1` (as a row id, or as a value of a Ref/RefList column pointing at
 * that table) mean that record. This is how Grist's UI saves an access resource and its rules in
 * one call (`['AddRecord', '_grist_ACLResources', -1, ...]`, then rules with `resource: -1`); it
 * works for every table.
 */
import type {DocMeta} from './meta.js';

const ADDS = new Set(['AddRecord', 'BulkAddRecord']);
const ROW_ACTIONS = new Set([
  'AddRecord',
  'BulkAddRecord',
  'UpdateRecord',
  'BulkUpdateRecord',
  'RemoveRecord',
  'BulkRemoveRecord',
]);

function refTable(type: string | undefined): string | null {
  const m = /^(?:Ref|RefList):(.+)$/.exec(type ?? '');
  return m ? m[1] : null;
}

export class Placeholders {
  private readonly byTable = new Map<string, Map<number, number>>();

  private real(tableId: string, id: unknown): unknown {
    if (typeof id !== 'number' || id >= 0) return id;
    return this.byTable.get(tableId)?.get(id) ?? id;
  }

  /** The action with the placeholders it names replaced by real ids (unchanged when it names none). */
  rewrite(action: unknown, meta: DocMeta): unknown {
    if (!this.byTable.size || !Array.isArray(action) || !ROW_ACTIONS.has(action[0])) return action;
    const [name, tableId, ids, values] = action as [string, string, unknown, unknown];
    const table = meta.tables.get(tableId);
    if (!table) return action;
    const out: unknown[] = [name, tableId];
    if (ADDS.has(name)) out.push(ids);
    else out.push(Array.isArray(ids) ? ids.map((id) => this.real(tableId, id)) : this.real(tableId, ids));
    if (values && typeof values === 'object' && !Array.isArray(values)) {
      const mapped: Record<string, unknown> = {};
      const bulk = name.startsWith('Bulk');
      for (const [colId, v] of Object.entries(values)) {
        const target = refTable(table.byId.get(colId)?.type);
        const map = target ? this.byTable.get(target) : undefined;
        if (!map) {
          mapped[colId] = v;
          continue;
        }
        const one = (cell: unknown): unknown => {
          if (typeof cell === 'number') return this.real(target!, cell);
          if (Array.isArray(cell) && cell[0] === 'L') return ['L', ...cell.slice(1).map((x) => this.real(target!, x))];
          return cell;
        };
        mapped[colId] = bulk && Array.isArray(v) ? v.map(one) : one(v);
      }
      out.push(mapped);
    } else if (action.length > 3) out.push(values);
    return out;
  }

  /** After an add: remembers which real ids its negative ones became. */
  record(action: unknown, ret: unknown): void {
    if (!Array.isArray(action) || !ADDS.has(action[0])) return;
    const tableId = action[1] as string;
    const negs = action[0] === 'AddRecord' ? [action[2]] : (action[2] as unknown[]);
    const got = action[0] === 'AddRecord' ? [ret] : (ret as unknown[]);
    if (!Array.isArray(negs) || !Array.isArray(got)) return;
    negs.forEach((neg, i) => {
      if (typeof neg === 'number' && neg < 0 && typeof got[i] === 'number') {
        let map = this.byTable.get(tableId);
        if (!map) this.byTable.set(tableId, (map = new Map()));
        map.set(neg, got[i] as number);
      }
    });
  }
}
