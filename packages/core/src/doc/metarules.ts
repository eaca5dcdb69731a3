/**
 * Who may write each `_grist_*` metadata table through the record paths and POST /apply (issue 11).
 * Grist's GranularAccess: writes to metadata tables need SCHEMA_EDIT, which editors have by
 * default; the access-rule tables need owners ("Only owners can modify access rules"); webhook
 * triggers are managed by owners only (Triggers.ts); `_grist_Attachments` accepts only a rename
 * ("_grist_Attachments modification is not allowed"). A table missing here is refused.
 */
import {BadRequest, Forbidden} from '../base/index.js';

/** The caller's role on the document, as far as writes go. */
export type WriterRole = 'owners' | 'editors';

export type MetaWrite = 'add' | 'update' | 'remove';

type Rule = WriterRole | 'nobody';

export const META_WRITE_RULES: Readonly<Record<string, Rule>> = {
  // Schema and layout: SCHEMA_EDIT (editors and owners by default in Grist).
  _grist_DocInfo: 'editors',
  _grist_Tables: 'editors',
  _grist_Tables_column: 'editors',
  _grist_Imports: 'editors',
  _grist_External_database: 'editors',
  _grist_External_table: 'editors',
  _grist_TableViews: 'editors',
  _grist_TabItems: 'editors',
  _grist_TabBar: 'editors',
  _grist_Views: 'editors',
  _grist_Views_section: 'editors',
  _grist_Views_section_field: 'editors',
  _grist_Validations: 'editors',
  _grist_REPL_Hist: 'editors',
  _grist_Pages: 'editors',
  _grist_Filters: 'editors',
  _grist_Cells: 'editors',
  // Access rules, shares and the older ACL tables: owners.
  _grist_ACLResources: 'owners',
  _grist_ACLRules: 'owners',
  _grist_ACLMemberships: 'owners',
  _grist_ACLPrincipals: 'owners',
  _grist_Shares: 'owners',
  // Webhooks: owners (the webhook endpoints check the same).
  _grist_Triggers: 'owners',
  // Rows come from uploads; editors may rename (update fileName), as in Grist; owners may remove.
  _grist_Attachments: 'editors',
};

const ACL_TABLES = new Set(['_grist_ACLResources', '_grist_ACLRules']);

/** Columns no one may write through these paths: what keeps the file a Grist document of its version. */
const FROZEN: Readonly<Record<string, ReadonlySet<string>>> = {
  _grist_DocInfo: new Set(['docId', 'schemaVersion', 'basketId', 'peers']),
};

/**
 * Throws unless `role` may write `tableId` (a metadata table) this way: 403 for a role that is too
 * low, 403 for what nobody may do. `colIds` are the columns an add or update sets.
 */
export function checkMetaWrite(tableId: string, kind: MetaWrite, colIds: Iterable<string>, role: WriterRole): void {
  const rule = META_WRITE_RULES[tableId];
  if (rule === undefined || rule === 'nobody') {
    throw new Forbidden(`${tableId} modification is not allowed`);
  }
  if (rule === 'owners' && role !== 'owners') {
    throw new Forbidden(
      ACL_TABLES.has(tableId) ? 'Only owners can modify access rules' : `Only owners can modify ${tableId}`,
    );
  }
  if (tableId === '_grist_DocInfo' && kind !== 'update') {
    throw new Forbidden(`${tableId} modification is not allowed`);
  }
  if (tableId === '_grist_Attachments') {
    // Rows come from uploads; removing them (cleanup) is for owners, as DELETE /attachments is.
    const cols = [...colIds].filter((c) => c !== 'id');
    const rename = kind === 'update' && cols.every((c) => c === 'fileName');
    if (!rename && !(kind === 'remove' && role === 'owners')) {
      throw new Forbidden('_grist_Attachments modification is not allowed');
    }
  }
  const frozen = FROZEN[tableId];
  if (frozen) {
    for (const c of colIds) {
      if (frozen.has(c)) {
        throw new BadRequest(`${tableId}.${c} cannot be changed`);
      }
    }
  }
}
