/**
 * What the OpenAPI document says beyond the routes themselves: the shapes of response bodies
 * (JSON Schema, OpenAPI 3.1), the query parameters (by name: the same name means the same thing
 * on every route), and each built-in route's success response.
 *
 * One thing: the API's response shapes, one table keyed by route, which grows with the routes;
 * its entries share the schema helpers at the top.
 */
import type {RouteResponse} from './route.js';

type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({$ref: `#/components/schemas/${name}`});
const arr = (items: Schema): Schema => ({type: 'array', items});
const int: Schema = {type: 'integer'};
const str: Schema = {type: 'string'};
const date: Schema = {type: 'string', format: 'date-time'};
const obj = (properties: Record<string, Schema>, required: string[] = []): Schema => ({
  type: 'object',
  properties,
  ...(required.length ? {required} : {}),
});

export const SCHEMAS: Record<string, Schema> = {
  Error: {
    type: 'object',
    description: "An error, in Grist's shape.",
    required: ['error'],
    properties: {error: {type: 'string'}, details: {type: 'object'}},
  },
  Role: {type: ['string', 'null'], enum: ['owners', 'editors', 'viewers', 'members', 'guests', null]},
  User: obj({id: int, name: str, ref: {type: ['string', 'null']}, picture: {type: ['string', 'null']}, type: str}, [
    'id',
    'name',
  ]),
  Profile: obj(
    {id: int, email: str, name: str, ref: str, picture: {type: ['string', 'null']}, anonymous: {type: 'boolean'}},
    ['id', 'email', 'name'],
  ),
  Org: obj(
    {
      id: int,
      name: str,
      domain: {type: ['string', 'null']},
      owner: {oneOf: [ref('User'), {type: 'null'}]},
      access: ref('Role'),
      host: {type: ['string', 'null']},
      createdAt: date,
      updatedAt: date,
    },
    ['id', 'name', 'domain', 'access'],
  ),
  OrgSummary: obj(
    {
      id: int,
      name: str,
      domain: {type: ['string', 'null']},
      owner: {oneOf: [ref('User'), {type: 'null'}]},
      host: {type: ['string', 'null']},
    },
    ['id', 'name'],
  ),
  Doc: obj(
    {
      id: str,
      name: str,
      access: ref('Role'),
      isPinned: {type: 'boolean'},
      urlId: {type: ['string', 'null']},
      type: {type: ['string', 'null']},
      options: {type: ['object', 'null']},
      createdAt: date,
      updatedAt: date,
      removedAt: {type: ['string', 'null']},
      workspace: ref('WorkspaceSummary'),
    },
    ['id', 'name', 'access'],
  ),
  WorkspaceSummary: obj({id: int, name: str, access: ref('Role'), org: ref('OrgSummary')}, ['id', 'name']),
  Workspace: obj(
    {
      id: int,
      name: str,
      access: ref('Role'),
      docs: arr(ref('Doc')),
      org: ref('OrgSummary'),
      isSupportWorkspace: {type: 'boolean'},
      createdAt: date,
      updatedAt: date,
      removedAt: {type: ['string', 'null']},
    },
    ['id', 'name', 'access'],
  ),
  Access: {
    type: 'object',
    description: 'Who has access, with their roles.',
    required: ['users'],
    properties: {
      maxInheritedRole: ref('Role'),
      users: arr(
        obj(
          {
            id: int,
            name: str,
            email: str,
            ref: str,
            picture: {type: ['string', 'null']},
            access: ref('Role'),
            isMember: {type: 'boolean'},
          },
          ['id', 'email', 'access'],
        ),
      ),
    },
  },
  CellValue: {description: 'A cell: a number, string, boolean, null, or a Grist encoded value such as ["L", 1, 2].'},
  Fields: {type: 'object', additionalProperties: ref('CellValue')},
  Tables: obj({tables: arr(obj({id: str, fields: {type: 'object'}, columns: arr(ref('Column'))}, ['id']))}, ['tables']),
  Column: obj({id: str, fields: {type: 'object'}}, ['id', 'fields']),
  Columns: obj({columns: arr(ref('Column'))}, ['columns']),
  ColumnIds: obj({columns: arr(obj({id: str}, ['id']))}, ['columns']),
  Records: obj(
    {
      records: arr(
        obj(
          {
            id: int,
            fields: ref('Fields'),
            errors: {type: 'object', additionalProperties: str, description: 'The error type of each error cell'},
            display: {
              type: 'object',
              additionalProperties: str,
              description: 'With display=true: the text Grist shows, for cells whose text is not their value',
            },
          },
          ['id', 'fields'],
        ),
      ),
    },
    ['records'],
  ),
  RecordIds: obj({records: arr(obj({id: int}, ['id']))}, ['records']),
  RecordCount: {...obj({count: int}, ['count']), examples: [{count: 42}]},
  Aggregates: {
    ...obj(
      {
        records: arr(
          obj(
            {
              fields: {
                ...ref('Fields'),
                description: "The group columns' values, then each aggregate by name (count, sum_Amount, ...)",
              },
              display: {
                type: 'object',
                additionalProperties: str,
                description: 'The text Grist shows for Ref group columns (their visible column)',
              },
            },
            ['fields'],
          ),
        ),
      },
      ['records'],
    ),
    examples: [
      {
        records: [
          {fields: {Owner: 1, Status: 'Open', count: 3, sum_Amount: 12.5}, display: {Owner: 'Ada'}},
          {fields: {Owner: 2, Status: 'Late', count: 1, sum_Amount: 0}, display: {Owner: 'Bob'}},
        ],
      },
    ],
  },
  ColumnarData: {
    type: 'object',
    description: 'Column id to the list of its values, `id` included.',
    additionalProperties: arr(ref('CellValue')),
  },
  RowIds: arr(int),
  ApplyResult: obj(
    {actionNum: int, actionHash: {type: ['string', 'null']}, retValues: arr({}), isModification: {type: 'boolean'}},
    ['actionNum', 'retValues'],
  ),
  SqlResult: obj({statement: str, records: arr(obj({fields: ref('Fields')}, ['fields']))}, ['statement', 'records']),
  Attachments: obj(
    {
      records: arr(
        obj({id: int, fields: obj({fileName: str, fileSize: int, timeUploaded: {type: ['string', 'null']}})}, [
          'id',
          'fields',
        ]),
      ),
    },
    ['records'],
  ),
  AttachmentMetadata: obj({fileName: str, fileSize: int, timeUploaded: {type: ['string', 'null']}}, [
    'fileName',
    'fileSize',
  ]),
  AttachmentTransferStatus: obj(
    {
      status: obj({pendingTransferCount: int, isRunning: {type: 'boolean'}, successes: int, failures: int}, [
        'pendingTransferCount',
        'isRunning',
        'successes',
        'failures',
      ]),
      locationSummary: {type: 'string', enum: ['none', 'internal', 'external', 'mixed']},
    },
    ['status', 'locationSummary'],
  ),
  Webhooks: obj(
    {
      webhooks: arr(
        obj(
          {
            id: str,
            fields: {
              type: 'object',
              description:
                'url, authorization and secret (masked), unsubscribeKey, eventTypes, isReadyColumn, watchedColIds, tableId, enabled, name, memo; includePrevious (true, only when on: D105)',
            },
            usage: {type: ['object', 'null']},
          },
          ['id', 'fields'],
        ),
      ),
    },
    ['webhooks'],
  ),
  WebhookIds: obj({webhooks: arr(obj({id: str}, ['id']))}, ['webhooks']),
  Subscription: obj({webhookId: str, unsubscribeKey: str, triggerId: int}, ['webhookId', 'unsubscribeKey']),
  Success: obj({success: {type: 'boolean'}}, ['success']),
  TableImport: obj(
    {
      tableId: str,
      dryRun: {type: 'boolean'},
      mode: {type: 'string', enum: ['append', 'upsert', 'replace']},
      rows: {...int, description: 'Data rows read from the file'},
      added: int,
      updated: int,
      unchanged: {...int, description: 'upsert: rows found already holding every value (not written)'},
      removed: {...int, description: 'replace: rows the table held before'},
      columns: arr(obj({source: str, target: str}, ['source', 'target'])),
      skipped: {...arr(str), description: 'Columns of the file not imported'},
      problems: {
        type: 'object',
        description:
          'By column id: values that did not convert to its type (kept as alt-text): count, and the first examples {row, value}',
        additionalProperties: obj({count: int, examples: arr(obj({row: int, value: {}}))}, ['count', 'examples']),
      },
    },
    ['tableId', 'dryRun', 'mode', 'rows', 'added', 'updated', 'unchanged', 'removed', 'columns', 'skipped', 'problems'],
  ),
  Triggers: obj(
    {
      records: arr(
        obj(
          {
            id: int,
            fields: obj({
              tableRef: int,
              label: str,
              memo: str,
              enabled: {type: 'boolean'},
              actions: {...str, description: 'JSON array: {type: "webhook", id, url, ...} or {type: "email", ...}'},
              condition: str,
              eventTypes: {description: 'ChoiceList cell ["L", ...] or null'},
              watchedColRefList: {description: 'RefList cell ["L", ...] or null'},
              isReadyColRef: int,
            }),
          },
          ['id', 'fields'],
        ),
      ),
    },
    ['records'],
  ),
  Snapshots: obj({snapshots: arr(obj({snapshotId: str, lastModified: date, docId: str}, ['snapshotId']))}, [
    'snapshots',
  ]),
  DocStates: obj({states: arr(obj({n: int, h: str}, ['n', 'h']))}, ['states']),
  DocComparison: obj(
    {
      left: ref('DocState'),
      right: ref('DocState'),
      parent: {oneOf: [ref('DocState'), {type: 'null'}]},
      summary: {type: 'string', enum: ['same', 'left', 'right', 'both', 'unrelated']},
      details: obj({leftChanges: ref('ActionSummary'), rightChanges: ref('ActionSummary')}, [
        'leftChanges',
        'rightChanges',
      ]),
    },
    ['left', 'right', 'parent', 'summary'],
  ),
  ActionSummary: {
    ...obj(
      {
        tableRenames: arr(arr({type: ['string', 'null']})),
        tableDeltas: {type: 'object', additionalProperties: ref('TableDelta')},
      },
      ['tableRenames', 'tableDeltas'],
    ),
    description:
      "Grist's ActionSummary: tables and columns renamed ([null, name] added, [name, null] removed) and changes per table.",
  },
  HistoryPage: obj(
    {
      changes: arr(
        obj(
          {
            actionNum: int,
            actionHash: str,
            time: date,
            user: str,
            rowId: int,
            type: {type: 'string', enum: ['add', 'update', 'remove']},
            cells: {
              type: 'object',
              description:
                'Per column: {before, after} (before absent for an added row, after for a removed one); censored cells ["C"].',
              additionalProperties: obj({before: {}, after: {}}),
            },
          },
          ['actionNum', 'actionHash', 'time', 'user', 'rowId', 'type', 'cells'],
        ),
      ),
      next: {type: ['string', 'null'], description: 'The cursor of the next page (null on the last).'},
    },
    ['changes', 'next'],
  ),
  TableDelta: obj(
    {
      updateRows: arr(int),
      removeRows: arr(int),
      addRows: arr(int),
      columnDeltas: {
        type: 'object',
        description: 'Per column, per row id: [before, after], each null (no cell), "?" (not kept) or [value].',
        additionalProperties: {type: 'object'},
      },
      columnRenames: arr(arr({type: ['string', 'null']})),
      mayBeIncomplete: {type: 'boolean', description: 'A bulk change kept only some cells (maxRows).'},
    },
    ['updateRows', 'removeRows', 'addRows', 'columnDeltas', 'columnRenames'],
  ),
  DocState: obj({n: int, h: str}, ['n', 'h']),
  TriggerMonitor: obj({delivered: arr({type: 'object'}), pending: arr(obj({id: int, fields: {type: 'object'}}))}, [
    'delivered',
    'pending',
  ]),
  DocApiKeyCreated: obj({id: {type: 'integer'}, key: str}, ['id', 'key']),
  DocApiKeys: obj(
    {
      apikeys: arr(
        obj(
          {
            id: {type: 'integer'},
            name: str,
            access: {type: 'string', enum: ['viewers', 'editors']},
            createdBy: {type: 'integer'},
            createdAt: str,
            expiresAt: {type: ['string', 'null']},
            lastUsedAt: {type: ['string', 'null']},
          },
          ['id', 'name', 'access', 'createdBy', 'createdAt', 'expiresAt', 'lastUsedAt'],
        ),
      ),
    },
    ['apikeys'],
  ),
  McpNoStream: obj(
    {
      jsonrpc: {type: 'string', const: '2.0'},
      error: obj({code: int, message: str}, ['code', 'message']),
      id: {type: 'null'},
    },
    ['jsonrpc', 'error', 'id'],
  ),
  Import: obj(
    {
      id: str,
      title: str,
      readOnly: {
        type: 'string',
        description: 'Present only when the new document can be read but not written (a newer schema): the reason.',
      },
    },
    ['id', 'title'],
  ),
};

const json = (schema: Schema, description: string): RouteResponse => ({description, schema});
const none = (description: string): RouteResponse => ({description, schema: {type: 'null'}});
const text = (description: string): RouteResponse => ({description, contentType: 'text/plain', schema: str});
const file = (contentType: string, description: string): RouteResponse => ({
  description,
  contentType,
  schema: {type: 'string', contentMediaType: contentType},
});

const DOCS = '/api/docs/:docId';
const TABLE = `${DOCS}/tables/:tableId`;

/** The success response of each built-in route, by `METHOD path`. A route's own `response` wins. */
export const RESPONSES: Record<string, RouteResponse> = {
  'GET /api/openapi.json': json({type: 'object'}, 'This document'),
  'GET /status': text(
    'Health, as Grist answers it: `Grist server(home,docs,static) is alive.` (500 when a check asked for by `db=1` or `ready=1` fails)',
  ),
  'GET /metrics': text('Prometheus metrics (only with GRISTLITE_METRICS=1)'),
  'GET /api/orgs': json(arr(ref('Org')), 'The orgs'),
  'POST /api/orgs': json(int, 'The new org id'),
  'GET /api/orgs/:oid': json(ref('Org'), 'The org'),
  'PATCH /api/orgs/:oid': none('Updated'),
  'DELETE /api/orgs/:oid': none('Never: always 410'),
  'DELETE /api/orgs/:oid/:name': none('Deleted'),
  'GET /api/orgs/:oid/access': json(ref('Access'), 'Who has access'),
  'PATCH /api/orgs/:oid/access': none('Access changed'),
  'GET /api/orgs/:oid/workspaces': json(arr(ref('Workspace')), 'The workspaces, with their docs'),
  'POST /api/orgs/:oid/workspaces': json(int, 'The new workspace id'),
  'GET /api/workspaces/:wid': json(ref('Workspace'), 'The workspace, with its docs'),
  'PATCH /api/workspaces/:wid': none('Renamed'),
  'DELETE /api/workspaces/:wid': none('Deleted'),
  'POST /api/workspaces/:wid/remove': none('Removed'),
  'POST /api/workspaces/:wid/unremove': none('Restored'),
  'GET /api/workspaces/:wid/access': json(ref('Access'), 'Who has access'),
  'PATCH /api/workspaces/:wid/access': none('Access changed'),
  'POST /api/workspaces/:wid/docs': json(str, 'The new document id'),
  [`GET ${DOCS}`]: json(ref('Doc'), 'The document'),
  [`PATCH ${DOCS}`]: none('Updated'),
  [`DELETE ${DOCS}`]: none('Deleted'),
  [`POST ${DOCS}/remove`]: none('Removed'),
  [`POST ${DOCS}/unremove`]: none('Restored'),
  [`PATCH ${DOCS}/pin`]: none('Pinned'),
  [`POST ${DOCS}/apikeys`]: json(ref('DocApiKeyCreated'), "The new key's id and secret (shown once)"),
  [`GET ${DOCS}/apikeys`]: json(ref('DocApiKeys'), "The document's API keys, without secrets"),
  [`GET ${DOCS}/forms/:vsId`]: json(
    obj({formFieldsById: {type: 'object'}, formLayoutSpec: str, formTableId: str, formTitle: str}, [
      'formFieldsById',
      'formLayoutSpec',
      'formTableId',
      'formTitle',
    ]),
    "A form widget's fields (by field id: colId, question, description, options, type, refValues), layout, table and title",
  ),
  [`GET ${DOCS}/shares`]: json(
    obj(
      {
        shares: arr(
          obj(
            {
              linkId: str,
              key: str,
              options: {type: 'object', description: "The share's options in the document (`publish`)"},
              url: {type: 'string', description: "The share's API root, `<base>/o/<org>/api/s/<key>`"},
              forms: arr(
                obj(
                  {
                    sectionId: int,
                    url: {
                      type: 'string',
                      description: "Grist's public form page, `<base>/o/<org>/forms/<key>/<sectionId>`",
                    },
                    apiUrl: {type: 'string', description: "The form's description through the share"},
                  },
                  ['sectionId', 'url', 'apiUrl'],
                ),
              ),
            },
            ['linkId', 'key', 'options', 'url', 'forms'],
          ),
        ),
      },
      ['shares'],
    ),
    "Beyond Grist: the document's shares (`_grist_Shares`) with their secret keys and public URLs, and the forms each publishes (owners only)",
  ),
  [`GET ${DOCS}/changes`]: file(
    'text/event-stream',
    'Server-Sent Events: `ready` (the current position), then `change` per committed write (JSON: kind, id, docId, time, actor, schemaChanged, tables with added/updated/removed; updated rows carry `fields` and `previous`, the values of the same columns before the write, D106), `reset` when changes were missed, `end` when the stream ends',
  ),
  [`DELETE ${DOCS}/apikeys/:keyId`]: none('Revoked'),
  [`PATCH ${DOCS}/unpin`]: none('Unpinned'),
  [`PATCH ${DOCS}/move`]: none('Moved'),
  [`GET ${DOCS}/access`]: json(ref('Access'), 'Who has access'),
  [`PATCH ${DOCS}/access`]: none('Access changed'),
  'GET /api/profile/user': json(ref('Profile'), 'The calling user'),
  'GET /api/orgs/:oid/usage': json(
    obj(
      {
        countsByDataLimitStatus: obj({approachingLimit: int, gracePeriod: int, deleteOnly: int}),
        attachments: obj({totalBytes: int}, ['totalBytes']),
      },
      ['countsByDataLimitStatus', 'attachments'],
    ),
    'Documents per data-limit status (all 0: no data limits) and the attachment bytes of live documents',
  ),
  'GET /api/session/access/all': json(
    obj(
      {
        users: arr(ref('Profile')),
        orgs: arr({
          allOf: [
            ref('OrgSummary'),
            obj({
              accessOptions: arr(
                obj({access: ref('Role'), id: int, email: str, perms: int, name: str}, ['access', 'id', 'perms']),
              ),
            }),
          ],
        }),
      },
      ['users', 'orgs'],
    ),
    "The caller's profile, and each org they belong to with their access (their personal org as id 0, `docs`)",
  ),
  'POST /api/profile/user/name': text('OK'),
  'GET /api/profile/apikey': text('The key, masked once shown'),
  'POST /api/profile/apikey': text('The new key'),
  'DELETE /api/profile/apikey': text('OK'),
  'DELETE /api/users/:userId': none('Deleted'),
  [`GET ${DOCS}/tables`]: json(ref('Tables'), 'The tables (with their columns when expand is set)'),
  [`POST ${DOCS}/tables`]: json(ref('Tables'), "The new tables' ids"),
  [`PATCH ${DOCS}/tables`]: none('Updated'),
  [`GET ${TABLE}/columns`]: json(ref('Columns'), 'The columns'),
  [`POST ${TABLE}/columns`]: json(ref('ColumnIds'), "The new columns' ids"),
  [`PATCH ${TABLE}/columns`]: none('Updated'),
  [`PUT ${TABLE}/columns`]: none('Added or updated'),
  [`DELETE ${TABLE}/columns/:colId`]: none('Removed'),
  [`GET ${TABLE}/records`]: json(ref('Records'), 'The records'),
  [`POST ${TABLE}/records/list`]: json(ref('Records'), 'The records'),
  [`POST ${TABLE}/records`]: json(ref('RecordIds'), "The new records' ids"),
  [`POST ${TABLE}/import`]: json(ref('TableImport'), 'What the import did (or would do, for a dry run)'),
  [`PATCH ${TABLE}/records`]: none('Updated'),
  [`PUT ${TABLE}/records`]: none('Added or updated'),
  [`POST ${TABLE}/records/delete`]: none('Removed'),
  [`POST ${TABLE}/data/delete`]: none('Removed'),
  [`GET ${TABLE}/data`]: json(ref('ColumnarData'), "The columns' values"),
  [`POST ${TABLE}/data`]: json(ref('RowIds'), 'The new row ids'),
  [`PATCH ${TABLE}/data`]: none('Updated'),
  [`POST ${DOCS}/apply`]: json(ref('ApplyResult'), 'What the actions did'),
  [`GET ${DOCS}/sql`]: json(ref('SqlResult'), 'The rows'),
  [`POST ${DOCS}/sql`]: json(ref('SqlResult'), 'The rows'),
  [`GET ${DOCS}/download`]: file('application/x-sqlite3', 'The .grist file (JSON {"dryRun": "allowed"} with dryrun)'),
  [`GET ${DOCS}/download/csv`]: file('text/csv', 'The table as CSV'),
  [`GET ${DOCS}/download/tsv`]: file('text/tab-separated-values', 'The table as TSV'),
  [`GET ${DOCS}/download/dsv`]: file('text/plain', 'The table as DSV (💩-separated)'),
  [`GET ${DOCS}/download/table-schema`]: json({type: 'object'}, "The table's Frictionless table schema"),
  [`GET ${DOCS}/download/json`]: json(
    obj(
      {
        tables: arr(
          obj(
            {
              id: str,
              columns: arr(ref('Column')),
              records: arr(obj({id: int, fields: ref('Fields'), errors: {type: 'object'}}, ['id', 'fields'])),
            },
            ['id', 'columns', 'records'],
          ),
        ),
      },
      ['tables'],
    ),
    'Every table you may see (summary tables aside), its columns as GET /columns and records as GET /records give them',
  ),
  'POST /api/docs': json(str, 'The new document id'),
  'POST /api/workspaces/:wid/import': json(ref('Import'), 'The new document'),
  [`POST ${DOCS}/copy`]: json(str, 'The new document id'),
  [`POST ${DOCS}/attachments`]: json(arr(int), 'The new attachment ids'),
  [`GET ${DOCS}/attachments`]: json(ref('Attachments'), 'The attachments'),
  [`GET ${DOCS}/attachments/store`]: json(
    obj({type: {type: 'string', enum: ['internal', 'external']}}, ['type']),
    'Where new attachments go',
  ),
  [`POST ${DOCS}/attachments/store`]: json(
    obj({store: {type: 'string', description: "The external store's id (absent for internal)"}}),
    'The store was chosen',
  ),
  [`GET ${DOCS}/attachments/stores`]: json(
    obj({stores: arr(obj({label: str}, ['label']))}, ['stores']),
    'The external stores configured on the server',
  ),
  [`POST ${DOCS}/attachments/transferAll`]: json(ref('AttachmentTransferStatus'), 'The transfer status, once started'),
  [`GET ${DOCS}/attachments/transferStatus`]: json(
    ref('AttachmentTransferStatus'),
    'The transfer status and where the files are',
  ),
  [`GET ${DOCS}/attachments/archive`]: file('application/zip', 'Every attachment in a zip (or a tar with format=tar)'),
  [`POST ${DOCS}/attachments/archive`]: json(
    obj({added: int, errored: int, unused: int}, ['added', 'errored', 'unused']),
    'How many files were restored, could not be, or were not needed',
  ),
  [`POST ${DOCS}/attachments/updateUsed`]: none('Unreferenced attachments are marked deleted'),
  [`POST ${DOCS}/attachments/removeUnused`]: none('Unused attachments removed'),
  [`POST ${DOCS}/attachments/verifyFiles`]: none('Every attachment file is present and intact'),
  [`GET ${DOCS}/download/xlsx`]: file(
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    'The document (or one table) as an Excel workbook',
  ),
  [`GET ${DOCS}/attachments/:attId`]: json(ref('AttachmentMetadata'), "The attachment's metadata"),
  [`GET ${DOCS}/attachments/:attId/download`]: file(
    'application/octet-stream',
    "The attachment's bytes, with its own content type",
  ),
  [`GET ${DOCS}/webhooks`]: json(ref('Webhooks'), 'The webhooks'),
  [`POST ${DOCS}/webhooks`]: json(ref('WebhookIds'), "The new webhooks' ids"),
  [`DELETE ${DOCS}/webhooks/queue`]: json(ref('Success'), 'Queue cleared'),
  [`DELETE ${DOCS}/webhooks/queue/:webhookId`]: json(ref('Success'), 'Queue cleared'),
  [`PATCH ${DOCS}/webhooks/:webhookId`]: json(ref('Success'), 'Updated'),
  [`DELETE ${DOCS}/webhooks/:webhookId`]: json(ref('Success'), 'Removed'),
  [`GET ${DOCS}/triggers`]: json(ref('Triggers'), 'The triggers'),
  [`GET ${DOCS}/triggers/monitor`]: json(ref('TriggerMonitor'), 'Events waiting for delivery'),
  [`POST ${DOCS}/triggers`]: json(ref('RecordIds'), "The new triggers' row ids"),
  [`PATCH ${DOCS}/triggers`]: json(ref('Success'), 'Updated'),
  [`POST ${DOCS}/triggers/delete`]: json(ref('Success'), 'Removed'),
  [`POST ${DOCS}/force-reload`]: json({type: 'null'}, 'Closed; reopened on its next use'),
  [`POST ${DOCS}/recover`]: json(
    {type: 'object', properties: {recoveryMode: {type: 'boolean'}}, required: ['recoveryMode']},
    'The recovery mode now',
  ),
  'POST /api/housekeeping/docs/:docId/force-reload': json({type: 'null'}, 'Closed; reopened on its next use'),
  'POST /api/housekeeping/docs/:docId/assign': json({type: 'boolean'}, 'false: the document stays where it is'),
  [`POST ${DOCS}/assign`]: json({type: 'boolean'}, 'false: the document stays where it is'),
  [`GET ${DOCS}/snapshots`]: json(ref('Snapshots'), 'The snapshots (the current state)'),
  [`GET ${DOCS}/states`]: json(ref('DocStates'), 'The states, newest first'),
  [`POST ${DOCS}/states/remove`]: json({type: 'null'}, 'History truncated'),
  [`POST ${DOCS}/snapshots/remove`]: json(
    obj({snapshotIds: arr(str)}, ['snapshotIds']),
    'The snapshots removed (none can be: only the current state is kept)',
  ),
  [`POST ${DOCS}/flush`]: json({type: 'boolean'}, 'true: every write is on disk when answered'),
  [`GET ${DOCS}/timing`]: json(
    obj({status: {type: 'string', enum: ['disabled']}}, ['status']),
    'Formula timing is off (gristlite does not time formulas per column)',
  ),
  [`GET ${DOCS}/compare/:otherDocId`]: json(ref('DocComparison'), 'How the two documents relate'),
  [`GET ${DOCS}/compare`]: json(ref('DocComparison'), 'What changed from left to right'),
  [`GET ${TABLE}/history`]: json(ref('HistoryPage'), 'Changes, newest first'),
  [`GET ${TABLE}/records/:rowId/history`]: json(ref('HistoryPage'), 'Changes, newest first'),
  [`POST ${DOCS}/replace`]: json({type: 'null'}, 'Replaced'),
  [`POST ${TABLE}/_subscribe`]: json(ref('Subscription'), 'The subscription'),
  [`POST ${TABLE}/_unsubscribe`]: json(ref('Success'), 'Unsubscribed'),
  // Beyond Grist (issue 42 §4): a JSON-RPC 2.0 POST; tools and their inputs are in `tools/list` (docs/mcp.md).
  'POST /api/mcp': json(
    obj({
      jsonrpc: {type: 'string', const: '2.0'},
      id: {type: ['string', 'integer', 'null']},
      result: {
        type: 'object',
        description: 'initialize, tools/list or tools/call result (`isError: true` for a tool error)',
      },
      error: obj({code: int, message: str}, ['code', 'message']),
    }),
    'The JSON-RPC response (an array for a batch); 202 with no body for notifications only',
  ),
  'GET /api/mcp': json(
    ref('McpNoStream'),
    'Never: answered 405 (Allow: POST), as Streamable HTTP asks of a stateless server',
  ),
  'DELETE /api/mcp': json(ref('McpNoStream'), 'Never: answered 405 (Allow: POST), there being no session to end'),
};

const flag = (description: string): Schema => ({type: 'boolean', description: `${description} (1, true, on or yes).`});

/** Every query parameter, by name: its schema and what it does. */
export const QUERY_PARAMS: Record<string, Schema> = {
  merged: flag('List the merged personal org "docs" instead of each personal org'),
  showRemoved: flag('Show soft-deleted items instead'),
  permanent: flag('Delete for good instead of soft-deleting'),
  expand: {type: 'string', enum: ['column'], description: 'With "column", each table\'s columns are included.'},
  hidden: flag('Include hidden columns (manualSort and helper columns)'),
  filter: {
    type: 'string',
    description: 'JSON object of column id to the list of values to keep, e.g. {"Status": ["Done"]}.',
  },
  sort: {
    type: 'string',
    description: 'Comma-separated column ids; "-" before one sorts it descending, e.g. -Date,Name.',
  },
  limit: {type: 'integer', minimum: 0, description: 'At most this many records (0: no limit).'},
  cellFormat: {type: 'string', enum: ['normal', 'typed'], description: 'How cells are encoded.'},
  display: flag(
    'Beyond Grist: each record gains "display", the text Grist shows for each cell whose text is not its value as ' +
      'JSON writes it (formatted numbers and dates, references by their shown column, lists, errors). Not with cellFormat=typed.',
  ),
  includeDisplay: flag('The same as display (the name grist-core #880 proposes)'),
  cursor: {
    type: 'string',
    description:
      'Beyond Grist: the next page of a limited read. Take it from the Link header (rel="next") a limited read answers ' +
      'when more rows match; keep the same filter and sort. Invalid, or made for another query: 400.',
  },
  immediate: flag('Accepted for Grist compatibility (no effect: formulas are always computed before the answer)'),
  db: flag('Also check the home database (/status)'),
  format: {type: 'string', enum: ['zip', 'tar'], description: 'Archive format (attachments/archive; default zip).'},
  expiredonly: flag('Remove only attachments deleted more than 7 days ago'),
  verifyfiles: flag('Check every attachment file first'),
  ready: flag('Also check that the server is ready: started, not shutting down (/status)'),
  timeout: {
    type: 'integer',
    minimum: 1,
    description: 'Milliseconds the database check may take (/status; default 10000).',
  },
  noparse: flag('Store strings as given rather than parsing them by column type'),
  flat: flag('The body may be a plain array of records\' fields, without {"records": [{"fields": ...}]}'),
  noadd: flag('Do not add what does not exist yet'),
  noupdate: flag('Do not update what exists'),
  replaceall: flag('Remove the columns not named in the body'),
  onmany: {
    type: 'string',
    enum: ['first', 'none', 'all'],
    description: 'What to update when "require" matches several records.',
  },
  allow_empty_require: flag('Allow an empty "require" (adds a record every time)'),
  q: {type: 'string', description: 'A single SELECT statement.'},
  nohistory: flag('Leave out the action history'),
  template: flag('Leave out the data (structure only)'),
  title: {type: 'string', description: 'Name of the downloaded file, without extension.'},
  dryrun: flag('Only check access, answering {"dryRun": "allowed"}'),
  tableId: {type: 'string', description: 'Table id.'},
  table: {
    type: 'string',
    description: "Beyond Grist: only this table's changes (and events saying the schema changed); needed by where.",
  },
  lastEventId: {
    type: 'string',
    description: 'Resume after this event id (for clients that cannot send Last-Event-ID).',
  },
  header: {type: 'string', enum: ['colId', 'label'], description: 'Column headers: ids or labels.'},
  viewSection: {
    type: 'integer',
    description: 'A widget to export: checked (404 when unknown), then refused (gristlite exports tables; D67).',
  },
  colId: {type: 'string', description: 'Column id of the cell the attachment is in.'},
  rowId: {type: 'integer', description: 'Row id of the cell the attachment is in.'},
  maybeNew: flag('Accepted for Grist compatibility (the attachment may not be in a cell yet)'),
  inline: flag('Content-Disposition inline instead of attachment'),
  name: {type: 'string', description: 'File name to download as.'},
  // Beyond Grist: conditions in the formula language (issue 40, docs/queries.md).
  where: {
    type: 'string',
    description:
      "Beyond Grist: a condition in Grist's formula language; only the rows for which a formula column holding it " +
      'would be true. Combines with filter, sort, limit and cursor. Malformed, naming an unknown column, or running ' +
      'out of the formula time budget: 400. On writes (PATCH /records, POST /records/delete) it names the rows ' +
      'written: required there, where=True names every row. On the CSV/TSV/DSV/XLSX downloads of one table ' +
      '(tableId) it names the rows exported. On the change feed (GET /changes, with table) it names the rows whose ' +
      'changes are sent, as each write left them: a row entering it arrives as added, one leaving it as removed.',
    examples: ['$Price > 10 and $Status in ("Open", "Late")', 'not $Due or $Due < TODAY()', '$Owner.Email == "a@b.c"'],
  },
  count: flag('Beyond Grist: answer {"count": N}, how many records the read would return (filter and where apply)'),
  detail: flag('Include what changed on each side since the common state (compare)'),
  maxRows: {
    type: 'integer',
    minimum: 1,
    description:
      'Cells of at most this many rows per bulk change in change details (compare; default 10, `null`: all).',
  },
  left: {type: 'string', description: 'A state: HEAD (default), a state hash, followed by any of ~n and ^ (compare).'},
  right: {type: 'string', description: 'A state: HEAD (default), a state hash, followed by any of ~n and ^ (compare).'},
  // Beyond Grist: aggregates (issue 40 §2, docs/queries.md, D116).
  group_by: {
    type: 'string',
    description:
      'Beyond Grist (aggregate): comma-separated column ids to group by; none: one group of every row. A Ref ' +
      'column groups by row id and answers its display value in "display". A column the caller cannot read: 400.',
    examples: ['Status', 'Owner,Status'],
  },
  agg: {
    type: 'string',
    description:
      'Beyond Grist (aggregate): comma-separated aggregates, each count or fn:Col with fn one of sum, avg, min, max, ' +
      "count_distinct; answered as count and fn_Col. Default count. sum/avg take numbers only (as Grist's " +
      'SUM/AVERAGE), min/max numbers, dates or texts, None when there are none.',
    examples: ['count,sum:Amount', 'avg:Price,max:Due,count_distinct:Owner'],
  },
  having: {
    type: 'string',
    description:
      'Beyond Grist (aggregate): a Python condition over the aggregates, by their answered names (count, sum_Amount, ' +
      '...): constants, + - * /, comparisons, in, is None, and/or/not. A group is kept where it is true (not where ' +
      'it raises, e.g. None > 2). Aggregates it names need not be in agg.',
    examples: ['count > 2 and sum_Amount > 10', 'avg_Price is not None and avg_Price >= 2.5'],
  },
};
