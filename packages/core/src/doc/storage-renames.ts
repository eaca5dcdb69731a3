/**
 * Column renames of a document (DocStorage's part, storage.ts): the SQL rename, and the formulas
 * of every table that refer to a renamed column or table, rewritten from their syntax tree. Several
 * renames in one schema update see each other: the renames and rewrites made since the metadata
 * was last loaded are kept here until the next reload.
 */
import {type AclEdits, type AclRows, aclColumnRenames} from '../access/rules/renames.js';
import {engineError} from '../base/index.js';
import {formulaRenames, type Rename} from '@gristlite/formula';
import type {TableMeta} from './meta.js';
import {quoteIdent} from './query.js';
import type {StorageSource} from './storage-source.js';

export class StorageRenames {
  /** Column renames and formula rewrites made since the metadata was last loaded (formulaEdits). */
  private readonly pendingColIds = new Map<number, string>();
  private readonly pendingFormulas = new Map<number, string>();

  constructor(private readonly s: StorageSource) {}

  /** The metadata was reloaded: it holds the renames and rewrites made so far. */
  reset(): void {
    this.pendingColIds.clear();
    this.pendingFormulas.clear();
  }

  /** Renames a column; with `batch`, the SQL rename is left to one rebuild of the table (recorded there). */
  renameSqlColumn(table: TableMeta, from: string, to: string, batch?: Map<string, string> | null): void {
    if (from === 'id' || from === 'manualSort') {
      throw engineError('ValueError', 'Cannot rename internal Grist column');
    }
    const t = quoteIdent(table.tableId);
    this.s.settleFormulaData();
    if (batch) {
      batch.set(from, to);
    } else if (from.toLowerCase() === to.toLowerCase()) {
      const tmp = `_tmp_${from}`;
      this.s.db.exec(`ALTER TABLE ${t} RENAME COLUMN ${quoteIdent(from)} TO ${quoteIdent(tmp)}`);
      this.s.db.exec(`ALTER TABLE ${t} RENAME COLUMN ${quoteIdent(tmp)} TO ${quoteIdent(to)}`);
    } else {
      this.s.db.exec(`ALTER TABLE ${t} RENAME COLUMN ${quoteIdent(from)} TO ${quoteIdent(to)}`);
    }
    this.s.clearStatements();
    // Formulas referring to the column follow the rename ($from, rec.from, $ref.from, lookup
    // arguments, order_by), in every table, found from their syntax tree and the column types.
    const edits = this.formulaEdits({kind: 'column', tableId: table.tableId, oldId: from, newId: to});
    this.s.formulas?.renameColumn(table.tableId, from, to);
    const renamed = table.byId.get(from);
    if (renamed) {
      this.pendingColIds.set(renamed.colRef, to);
    }
    for (const [colRef, formula] of edits) {
      const found = this.s.meta.colsByRef.get(colRef)!;
      this.s.formulas?.modifyColumn(found.table.tableId, this.pendingColIds.get(colRef) ?? found.col.colId, {formula});
      this.s.metaUpdate('_grist_Tables_column', colRef, {formula});
      this.pendingFormulas.set(colRef, formula);
    }
    // Access rules follow too (their parsed form is recomputed with the write's other rule changes).
    applyAclEdits(this.s, aclColumnRenames(readAclRows(this.s), table.tableId, from, to));
  }

  /**
   * The formula rewrites a rename implies, by colRef: from the metadata as it was before the
   * current schema update, with the renames and rewrites made since (several renames in one update).
   */
  formulaEdits(rename: Rename): Map<number, string> {
    const out = new Map<number, string>();
    const refs = new Map<string, number>();
    const schema = this.s.meta.userTables.map((t) => ({
      tableId: t.tableId,
      columns: t.columns.map((c) => {
        const colId = this.pendingColIds.get(c.colRef) ?? c.colId;
        refs.set(`${t.tableId}\0${colId}`, c.colRef);
        return {colId, type: c.type, formula: this.pendingFormulas.get(c.colRef) ?? c.formula};
      }),
    }));
    for (const e of formulaRenames(schema, rename)) {
      const colRef = refs.get(`${e.tableId}\0${e.colId}`);
      if (colRef !== undefined) {
        out.set(colRef, e.formula);
      }
    }
    return out;
  }
}

/** The rule tables' rows a rename reads (the rows of a document without rules: none). */
export function readAclRows(s: Pick<StorageSource, 'metaRows'>): AclRows {
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    resources: s
      .metaRows('_grist_ACLResources')
      .map((r) => ({id: Number(r.id), tableId: str(r.tableId), colIds: str(r.colIds)})),
    rules: s.metaRows('_grist_ACLRules').map((r) => ({
      id: Number(r.id),
      resource: Number(r.resource),
      aclFormula: str(r.aclFormula),
      userAttributes: str(r.userAttributes),
    })),
  };
}

/** Writes a rename's rule edits through the metadata, so that the write sees them as its own. */
export function applyAclEdits(s: Pick<StorageSource, 'metaUpdate'>, edits: AclEdits): void {
  for (const [id, values] of edits.resources) s.metaUpdate('_grist_ACLResources', id, values);
  for (const [id, values] of edits.rules) s.metaUpdate('_grist_ACLRules', id, values);
}
