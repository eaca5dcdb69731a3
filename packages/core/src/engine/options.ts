/**
 * What `Engine.open` takes (each default read from `env`: docs/operations.md) and the shapes of the
 * engine's answers that are not a document's.
 */
import type {BudgetSettings} from '@gristlite/formula';
import {type AttachmentStore, AttachmentStores, DirectoryAttachmentStore} from '../attachments/index.js';
import type {ClusterOptions, DocLeases} from '../cluster/index.js';
import type {HistorySettings} from '../doc/history/index.js';
import type {OrgSettings} from '../home/settings.js';
import type {HomeStore} from '../home/types.js';

/** An org's usage as `GET /api/orgs/{org}/usage` answers (Grist's OrgUsageSummary). */
export interface OrgUsageSummary {
  /** Documents per data-limit status; gristlite enforces no data limits, so all 0. */
  countsByDataLimitStatus: {approachingLimit: number; gracePeriod: number; deleteOnly: number};
  /** Attachment bytes of the org's live documents. */
  attachments: {totalBytes: number};
}

/** Options of `Engine.open`; defaults come from `env` (GRISTLITE_* settings, see docs/operations.md). */
export interface EngineOptions {
  /** Directory holding the home database (unless `home` is given) and every document file. */
  dataDir: string;
  /**
   * Serve the data directory alone: another process asking the same fails to open
   * (datadirlock.ts). `gristlite serve` sets it on the embedded SQLite home.
   */
  lockDataDir?: boolean;
  /** A home store to use instead of the embedded SQLite one (e.g. PostgreSQL). */
  home?: HomeStore;
  /** Default (and largest) SQL timeout; default from GRISTLITE_SQL_TIMEOUT_MSEC, else 1000 ms. */
  sqlTimeoutMs?: number;
  /** SQL worker processes (default GRISTLITE_SQL_WORKERS, else 2). */
  sqlWorkers?: number;
  /**
   * Documents kept open at once (default GRISTLITE_MAX_OPEN_DOCS, else 200), lowered to what the
   * descriptor limit allows (`maxOpenDocsFor`); least recently used closed first.
   */
  maxOpenDocs?: number;
  /** The process's descriptor limit the cap is derived from (default: read at start; null: unknown, no lowering). */
  descriptorLimit?: number | null;
  /** An open document unused this long is closed (default GRISTLITE_DOC_IDLE_MSEC, else 300000 ms). */
  docIdleMs?: number;
  /**
   * Formula budgets over the defaults (docs/formulas.md, Limits): default from
   * GRISTLITE_FORMULA_CELL_MSEC (1000) and GRISTLITE_FORMULA_RECALC_MSEC (30000). Formulas run on
   * the event loop (D86): a recalculation holds it up to the second.
   */
  formulaBudget?: Partial<BudgetSettings>;
  /**
   * Bounds of `where` conditions (docs/queries.md): longest text (GRISTLITE_WHERE_MAX_CHARS, 4096)
   * and most rows one update or removal by condition touches (GRISTLITE_WHERE_MAX_ROWS, 50000);
   * most groups an aggregate answers (GRISTLITE_AGGREGATE_MAX_GROUPS, 10000); most time the formula
   * engine spends on one request's condition (GRISTLITE_WHERE_MAX_MSEC, 1000).
   */
  where?: {maxChars?: number; maxRows?: number; maxGroups?: number; maxMs?: number};
  /**
   * How writes are recorded in each document's action history (D120): default from
   * GRISTLITE_HISTORY (`0` turns recording off), GRISTLITE_HISTORY_MAX_ROWS (1000) and
   * GRISTLITE_HISTORY_MAX_BYTES (1e9); Grist's GRIST_ACTION_HISTORY_MAX_ROWS/BYTES also accepted.
   */
  history?: HistorySettings;
  /** At start, resume webhook delivery of every document with events waiting (default true). */
  resumeWebhooks?: boolean;
  /**
   * The server's public URL, which document URLs (SELF_HYPERLINK) are built on (default
   * GRISTLITE_PUBLIC_URL, else Grist's APP_HOME_URL; null: each request's own scheme and host).
   */
  publicUrl?: string | null;
  /**
   * Personal orgs, who may create team sites and the install admin; default from Grist's
   * GRIST_PERSONAL_ORGS, GRIST_ORG_CREATION_ANYONE and GRIST_ADMIN_EMAIL / GRIST_DEFAULT_EMAIL /
   * GRIST_SUPPORT_EMAIL (docs/operations.md, "Orgs").
   */
  orgs?: OrgSettings;
  /** Settings read from the environment (webhook delivery, SQL timeout); core reads no process globals. */
  env?: Record<string, string | undefined>;
  /** Document leases, when several processes share the data directory (may resolve later). */
  leases?: DocLeases | Promise<DocLeases>;
  /**
   * Several machines: documents in object storage, placement and fencing in PostgreSQL
   * (docs/deployment.md). Each worker's `dataDir` is then its own cache of the documents it holds.
   */
  cluster?: ClusterOptions;
  /**
   * The 32-byte key that seals pagination cursors (cursor.ts). Default: with a cluster, derived
   * from the deployment's shared secret; else `cursor.key` in the data directory, made on first use.
   */
  cursorKey?: Buffer;
  /**
   * External attachment stores documents may choose (`POST /attachments/store`), besides the
   * directory of GRISTLITE_ATTACHMENT_STORE_DIR (label `filesystem`). The CLI adds S3 ones.
   */
  attachmentStores?: AttachmentStore[];
  /**
   * The label of the store `{type: "external"}` picks (default GRISTLITE_ATTACHMENT_STORE; may be
   * left out when there is one store, or one besides `snapshots`).
   */
  attachmentStore?: string;
  /**
   * Where unexpected errors of background work go (closing a document, resuming or running webhook
   * delivery), with what was being done. Default: `console.error`. The CLI passes its pino logger.
   */
  onError?: (err: unknown, what: string) => void;
}

/** The stores given, and the directory of GRISTLITE_ATTACHMENT_STORE_DIR (docs/operations.md). */
export function attachmentStoresFrom(opts: EngineOptions, env: Record<string, string | undefined>): AttachmentStores {
  const stores = [...(opts.attachmentStores ?? [])];
  const dir = env.GRISTLITE_ATTACHMENT_STORE_DIR;
  if (dir) stores.unshift(DirectoryAttachmentStore.open(dir));
  try {
    return new AttachmentStores(stores, opts.attachmentStore ?? (env.GRISTLITE_ATTACHMENT_STORE || undefined));
  } catch (e) {
    throw new Error(`GRISTLITE_ATTACHMENT_STORE: ${(e as Error).message}`);
  }
}
