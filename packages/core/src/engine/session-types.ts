/**
 * The typed bodies and answers of `Session` and `SessionDoc` beyond records: what the REST API
 * takes as JSON (or query parameters) and answers, as TypeScript interfaces.
 */
import type {AttachmentInfo} from '../attachments/index.js';
import type {DsvFormat, ExportHeader} from '../export/index.js';
import type {HomeService} from '../home/service.js';
import type {TriggerInputFields} from '../webhooks/index.js';

/** The body of `POST /api/orgs`: a new team site. */
export interface NewOrgBody {
  /** The org's name (required). */
  name: string;
  /** Its subdomain (`/o/<domain>/`), or null for none. */
  domain?: string | null;
}

/** The body of `POST /api/orgs/{org}/workspaces` and `PATCH /api/workspaces/{wid}`. */
export interface WorkspaceBody {
  /** The workspace's name (required). */
  name: string;
}

/** The body of `PATCH /api/docs/{doc}`: the fields to change, the others kept. */
export interface DocUpdateBody {
  /** A new name. */
  name?: string;
  /** A new unique alias usable in place of the id, or null to drop it. */
  urlId?: string | null;
  /** Pinned in its workspace. */
  isPinned?: boolean;
  /** Grist's document options (`description`, `icon`, `openMode`, ...). */
  options?: Record<string, unknown> | null;
  /** `"template"` or `"tutorial"`, or null for an ordinary document. */
  type?: 'template' | 'tutorial' | null;
}

/** Options of `Session.removeDoc` and `Session.removeWorkspace` (`POST .../remove`). */
export interface RemoveOptions {
  /** Delete for good (`?permanent=1`), as `DELETE` does, instead of moving to the trash. */
  permanent?: boolean;
}

/** An org's, workspace's or document's access list, as `GET .../access` answers. */
export type AccessList = Awaited<ReturnType<HomeService['getDocAccess']>>;

/** Options of `SessionDoc.download` and `SessionDoc.downloadTo` (`GET /download`). */
export interface GristDownloadOptions {
  /** Leave out the action history (`?nohistory=1`). */
  nohistory?: boolean;
  /** Structure only, no data (`?template=1`). */
  template?: boolean;
  /** The file name without extension (`?title=`; default: the document's name). */
  title?: string;
}

/** A download: the bytes as a stream, with the file name and type HTTP would send them with. */
export interface SessionDownload {
  /** The file name (`Content-Disposition` over HTTP). */
  filename: string;
  /** The media type (`Content-Type` over HTTP). */
  contentType: string;
  /** The bytes, produced as they are read (read it once). */
  body: AsyncIterable<Uint8Array>;
}

/** Options of `SessionDoc.exportTable` (`GET /download/csv`, `/tsv`, `/dsv`). */
export interface TableExportOptions {
  /** `csv` (default), `tsv`, or `dsv` (Grist's `💩`-separated values). */
  format?: DsvFormat;
  /** Column labels (`label`, the default) or ids (`colId`) in the header row. */
  header?: ExportHeader;
  /** The file name without extension (`?title=`). */
  title?: string;
}

/** Options of `SessionDoc.exportXlsx` (`GET /download/xlsx`). */
export interface XlsxExportOptions {
  /** One table (`?tableId=`); default: every table the user may see, one sheet each. */
  tableId?: string;
  /** Column labels (`label`, the default) or ids (`colId`); with `tableId` only. */
  header?: ExportHeader;
  /** The file name without extension (`?title=`). */
  title?: string;
}

/** Options of `SessionDoc.tableSchema` (`GET /download/table-schema`). */
export interface TableSchemaExportOptions {
  /** Column labels (`label`, the default) or ids (`colId`). */
  header?: ExportHeader;
  /** The `path` the schema names for its CSV (default: the REST path, without host). */
  csvPath?: string;
}

/** One file to add with `SessionDoc.addAttachments` (a multipart part named `upload` over HTTP). */
export interface NewAttachment {
  /** The file's name. */
  fileName: string;
  /** Its media type, or null when unknown. */
  mimeType?: string | null;
  /** Its bytes. */
  data: Uint8Array;
}

/** `GET /attachments`: attachment rows. */
export interface AttachmentList {
  /** One per attachment the user may reach. */
  records: Array<{id: number; fields: AttachmentInfo}>;
}

/** A new webhook (`POST /webhooks` takes `{webhooks: [{fields}]}`). */
export interface NewWebhook {
  /** Where events are posted. */
  url: string;
  /** Which changes are reported: `add`, `update`, `remove`. */
  eventTypes: Array<'add' | 'update' | 'remove'>;
  /** The table watched. */
  tableId: string;
  /** Sent as the `Authorization` header. */
  authorization?: string;
  /** Only changes to these columns are reported (default: any). */
  watchedColIds?: string[];
  /** Delivering (default true). */
  enabled?: boolean;
  /** A Bool column: rows are reported once it is true. */
  isReadyColumn?: string | null;
  /** A name for people. */
  name?: string;
  /** A note for people. */
  memo?: string;
  /** Beyond Grist: a secret to sign deliveries with (HMAC-SHA256). */
  secret?: string | null;
}

/** `PATCH /webhooks/{id}`: the fields of a webhook to change. */
export type WebhookPatch = Partial<NewWebhook>;

/**
 * A new trigger (`POST /triggers` takes `{records: [{fields}]}`): a `_grist_Triggers` record,
 * cells in Grist's encoding. Webhook actions in `actions` carry their `url` (kept as a secret).
 */
export interface NewTrigger extends TriggerInputFields {
  /** The row id of the table watched, in `_grist_Tables` (required). */
  tableRef: number;
}

/** `PATCH /triggers`: one trigger's id and the fields to change. */
export interface TriggerPatch {
  /** The trigger's row id. */
  id: number;
  /** The fields to change, the others kept. */
  fields: TriggerInputFields;
}

/** Options of `Session.copyDoc` and `SessionDoc.copy` (the body of `POST /copy`, less `workspaceId`). */
export interface CopyDocOptions {
  /** The copy's name (default: the source's). */
  documentName?: string;
  /** Structure only, no data. */
  asTemplate?: boolean;
}
