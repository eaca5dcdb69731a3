/**
 * The order Grist lists a table's columns (`GET /columns`) and a document's tables (`GET /tables`)
 * in: the order of its server's in-memory copies of `_grist_Tables_column` (`_colMetadataRecords`
 * walks it) and `_grist_Tables`. A copy is loaded in row id order when a document opens; added
 * rows are appended, and a removed row's place is taken by the copy's last row
 * (`TableData.onRemoveRecord` keeps its arrays dense that way). So after a column or table is
 * removed from the middle, the document's last one moves into its place, until the document is
 * opened again. Decision D49.
 */
import type Database from 'better-sqlite3';

/** One metadata table's rows in Grist's in-memory order. */
export class MetaRowSlots {
  /** Row ids in Grist's in-memory order; null until the first write that could change it. */
  private slots: number[] | null = null;
  private readonly sql: string;

  /** `metaTable` is a fixed `_grist_*` name, never user input. */
  constructor(readonly metaTable: '_grist_Tables_column' | '_grist_Tables') {
    this.sql = `SELECT id FROM ${metaTable} ORDER BY id`;
  }

  /** Before a write: takes the order the document was opened with (row id order), once. */
  start(db: Database.Database): void {
    if (this.slots === null) {
      this.slots = this.ids(db);
    }
  }

  /**
   * After a write that touched the table: rows added are appended (in id order), then rows
   * removed are taken out as Grist takes them out, in the order it lists them. This is the
   * sequence of `PUT /columns` (updates, additions, then the removal of the unlisted columns).
   */
  finish(db: Database.Database): void {
    if (this.slots === null) {
      return;
    }
    const now = this.ids(db);
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

  /** `items` in Grist's order, `rowId` telling each one's row id in the metadata table. */
  sort<T>(items: T[], rowId: (item: T) => number): T[] {
    if (this.slots === null) {
      return items;
    }
    const at = new Map(this.slots.map((id, i) => [id, i]));
    return [...items].sort((a, b) => (at.get(rowId(a)) ?? rowId(a)) - (at.get(rowId(b)) ?? rowId(b)));
  }

  private ids(db: Database.Database): number[] {
    return (db.prepare(this.sql).pluck().all() as number[]).map(Number);
  }
}
