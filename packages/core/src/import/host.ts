/**
 * What imports need from the engine that runs them. `Engine` has all of it; naming it here keeps
 * `import/` below `engine/` (the engine and its sessions call imports, never the reverse).
 */
import type {AccessContext} from '../access/rules/context.js';
import type {AttachmentStores} from '../attachments/external.js';
import type {Cluster} from '../cluster/index.js';
import type {OrgContext, Principal} from '../home/principal.js';
import type {HomeService} from '../home/service.js';
import type {Doc, HomeStore, Org, Role} from '../home/types.js';
import type {HistorySettings} from '../doc/history/index.js';
import type {ImportSettings} from './settings.js';

/** The engine's services an import uses (structurally, `Engine` is one). */
export interface ImportHost {
  readonly dataDir: string;
  readonly store: HomeStore;
  readonly home: HomeService;
  readonly cluster: Cluster | null;
  readonly attachmentStores: AttachmentStores;
  readonly importSettings: ImportSettings;
  /** How the documents an import writes record their action history (D120). */
  readonly historySettings: HistorySettings;
  /** The document's file path in the data directory. */
  docPath(docId: string): string;
  /** Called once a new document's file is in place. */
  docFileCreated(docId: string): Promise<void>;
  /** Removes documents' files (after a failed import). */
  removeDocFiles(docIds: string[]): Promise<void>;
  /** The page URL a document's SELF_HYPERLINK gives, or null. */
  docPageUrl(doc: Doc, org: Org, requestBase: string | null): string | null;
  /** The caller's access to a document (the home's sharing), as `need` requires. */
  docAccess(
    key: string,
    p: Principal,
    ctx: OrgContext,
    need: 'viewers' | 'editors' | 'owners',
  ): Promise<{doc: Doc; role: Role}>;
  /** Null when this process may open the document, else the holder's URL. */
  claimDoc(docId: string): Promise<string | null>;
  /** The open document, for its access rules. */
  openDoc(docId: string): ImportSourceDoc;
}

/** What an import reads of an open document: the caller's access under its rules. */
export interface ImportSourceDoc {
  /** The rules as they apply to `p` with `role`, or null when the document has none. */
  accessFor(p: Principal, role: Role | null): AccessContext | null;
}
