/**
 * The order Grist lists a table's columns in (`GET /columns`, `GET /tables`): the order of its
 * server's in-memory copy of `_grist_Tables_column` (`_colMetadataRecords` walks it). That copy is
 * loaded in row id order when a document opens; added rows are appended, and a removed row's
 * place is taken by the copy's last row (`TableData.onRemoveRecord` keeps its arrays dense that
 * way). So after a column is removed from the middle, the last column of the document moves into
 * its place, until the document is opened again. Decision D49.
 */
import type Database from 'better-sqlite3';

export class ColumnSlots {
  /** Column row ids in Grist's in-memory order; null until the first write that could change it. */
  private slots: number[] | null = null;

  /** Before a write: takes the order the document was opened with (row id order), once. */
  start(db: Database.Database): void {
    if (this.slots === null) {
      this.slots = ids(db);
    }
  }

  /**
   * After a write that touched `_grist_Tables_column`: rows added are appended (in id order), then
   * rows removed are taken out as Grist takes them out, in the order it lists them. This is the
   * sequence of `PUT /columns` (updates, additions, then the removal of the unlisted columns).
   */
  finish(db: Database.Database): void {
    if (this.slots === null) {
      return;
    }
    const now = ids(db);
    const present = new Set(now);
    const known = new Set(this.slots);
    const slots = this.slots;
    for (const id of now) {
      if (!known.has(id)) {
        slots.push(id);
      }
    }
    for (const id of slots.filter((x) => !present.has(x))) {
      const i = slots.indexOf(id);
      const last = slots.pop()!;
      if (i < slots.length) {
        slots[i] = last;
      }
    }
  }

  /** `cols` (of one table) in Grist's order. */
  sort<T extends {colRef: number}>(cols: T[]): T[] {
    if (this.slots === null) {
      return cols;
    }
    const at = new Map(this.slots.map((id, i) => [id, i]));
    return [...cols].sort((a, b) => (at.get(a.colRef) ?? a.colRef) - (at.get(b.colRef) ?? b.colRef));
  }
}

function ids(db: Database.Database): number[] {
  return (db.prepare('SELECT id FROM _grist_Tables_column ORDER BY id').pluck().all() as number[]).map(Number);
}
