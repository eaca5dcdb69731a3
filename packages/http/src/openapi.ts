/** The OpenAPI 3.1 document, generated from the route table and its valibot schemas. */
import {toJsonSchema} from '@valibot/to-json-schema';
import {QUERY_PARAMS, RESPONSES, SCHEMAS} from './openapi-schemas.js';
import {idempotencyOf, type Route} from './route.js';

const ERRORS: Record<string, string> = {
  '400': 'Bad request: invalid parameters or body',
  '401': 'Invalid API key',
  '403': 'No access',
  '404': 'Not found',
  '409': 'A request with the same Idempotency-Key is still running, or was applied without its answer kept',
  '422': 'The Idempotency-Key was used for another request (route, body or user)',
  '413': 'Body or upload too large',
  '429': 'Too many requests for this document at once',
  '503': 'Momentarily unavailable (out of resources); try again',
};

const TAGS: Record<string, string> = {
  meta: "This API's description",
  orgs: 'Team sites and personal orgs',
  workspaces: 'Workspaces of an org',
  docs: 'Documents: metadata, creation, import and copy',
  apikeys: 'Beyond Grist: API keys that open one document only',
  users: 'The calling user and API keys',
  tables: 'Tables of a document',
  columns: 'Columns of a table',
  records: 'Records of a table, and user actions',
  data: 'Records in columnar form (deprecated)',
  sql: 'Read-only SQL',
  downloads: 'Document and table downloads',
  attachments: 'Attachments of a document',
  webhooks: 'Webhooks of a document',
  mcp: 'Beyond Grist: the Model Context Protocol for agents (docs/mcp.md)',
};

function operationId(method: string, path: string): string {
  return `${method.toLowerCase()}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string) => (c ?? '').toUpperCase())}`;
}

/** Beyond Grist: the Idempotency-Key header of writes to a document (idempotency.ts). */
const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Beyond Grist: 1-255 printable characters naming this write. A repeat with the same key, route and body ' +
    'within 24 hours answers the first answer again without applying anything; the same key with another ' +
    'route, body or user is 422; a repeat while the first runs is 409.',
  schema: {type: 'string', minLength: 1, maxLength: 255},
};

const REPLAYED_HEADER = {
  description: 'Beyond Grist: "true" when this is the kept answer of an earlier request with the same Idempotency-Key.',
  schema: {type: 'string', enum: ['true']},
};

/** Beyond Grist: the next page of a limited read (cursor pagination, paging.ts). */
const LINK_HEADER = {
  description:
    'Beyond Grist: present when a limit left matching rows out; `<path?same query&cursor=...>; rel="next"` ' +
    '(RFC 8288) is the request for the next page. The last page has none.',
  schema: {type: 'string'},
};

/** Beyond Grist: revalidation of reads of document data (routes/revalidate.ts). */
const IF_NONE_MATCH = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description:
    'Beyond Grist: the ETag of an earlier answer to the same request by the same user; 304 with no body while ' +
    'nothing in the document changed.',
  schema: {type: 'string'},
};
const ETAG_HEADERS = {
  ETag: {
    description: 'Beyond Grist: a strong tag of this answer (document version, user and request).',
    schema: {type: 'string'},
  },
  'Cache-Control': {description: 'Beyond Grist: `private, no-cache` (revalidate each time).', schema: {type: 'string'}},
};

export function openApiDocument(routes: readonly Route[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  for (const r of routes) {
    if (r.internal) continue;
    const path = r.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const params = [...r.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: /^(wid|userId)$/.test(m[1]) ? {type: 'integer'} : {type: 'string'},
    }));
    const query = (r.query ?? []).map((name) => {
      const {description, ...schema} = QUERY_PARAMS[name] ?? {type: 'string', description: name};
      return {name, in: 'query', required: false, description, schema};
    });
    const ok = r.response ?? RESPONSES[`${r.method} ${r.path}`] ?? {description: 'Success', schema: {}};
    const keeps = idempotencyOf(r) === 'keep';
    const errors = ['400', '401', '403', '404'];
    if (r.body || r.upload) errors.push('413');
    if (r.path.startsWith('/api/docs/:docId/')) errors.push('429');
    errors.push('503');
    tags.add(r.tag);
    (paths[path] ??= {})[r.method.toLowerCase()] = {
      summary: r.summary,
      tags: [r.tag],
      operationId: operationId(r.method, path),
      ...(params.length || query.length || keeps || r.revalidate
        ? {
            parameters: [
              ...params,
              ...query,
              ...(keeps ? [IDEMPOTENCY_KEY] : []),
              ...(r.revalidate ? [IF_NONE_MATCH] : []),
            ],
          }
        : {}),
      ...(r.upload
        ? {
            requestBody: {
              required: !r.body,
              content: {
                'multipart/form-data': {
                  schema: {
                    type: 'object',
                    properties: {
                      upload: {type: 'array', items: {type: 'string', contentMediaType: 'application/octet-stream'}},
                      ...(r.uploadFields ?? {}),
                    },
                  },
                },
                ...(r.body
                  ? {'application/json': {schema: toJsonSchema(r.body, {errorMode: 'ignore', target: 'draft-2020-12'})}}
                  : {}),
              },
            },
          }
        : r.body
          ? {
              requestBody: {
                required: true,
                content: {
                  'application/json': {schema: toJsonSchema(r.body, {errorMode: 'ignore', target: 'draft-2020-12'})},
                },
              },
            }
          : {}),
      responses: {
        '200': {
          description: ok.description,
          ...(r.query?.includes('cursor') || keeps || r.revalidate
            ? {
                headers: {
                  ...(r.query?.includes('cursor') ? {Link: LINK_HEADER} : {}),
                  ...(keeps ? {'Idempotent-Replayed': REPLAYED_HEADER} : {}),
                  ...(r.revalidate ? ETAG_HEADERS : {}),
                },
              }
            : {}),
          content: {[ok.contentType ?? 'application/json']: {schema: ok.schema}},
        },
        ...(r.revalidate
          ? {'304': {description: 'Beyond Grist: the If-None-Match tag is current; no body', headers: ETAG_HEADERS}}
          : {}),
        ...Object.fromEntries(errors.map((code) => [code, {$ref: `#/components/responses/Error${code}`}])),
        ...(keeps
          ? {
              '409': {$ref: '#/components/responses/Error409'},
              '422': {$ref: '#/components/responses/Error422'},
            }
          : {}),
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'gristlite',
      version,
      description:
        "Grist's REST API (v1.0.1), as served by gristlite. Authenticate with `Authorization: Bearer <API key>`.",
      license: {name: 'Apache-2.0', identifier: 'Apache-2.0'},
    },
    servers: [
      {url: '/', description: 'This server (the personal org, or the team site of the subdomain)'},
      {
        url: '/o/{org}',
        description: 'A team site, by its domain',
        variables: {org: {default: 'docs', description: 'The org\'s domain ("docs": your personal orgs)'}},
      },
    ],
    tags: [...tags].map((name) => ({name, description: TAGS[name] ?? name})),
    components: {
      securitySchemes: {bearer: {type: 'http', scheme: 'bearer', description: 'API key'}},
      schemas: SCHEMAS,
      responses: Object.fromEntries(
        Object.entries(ERRORS).map(([code, description]) => [
          `Error${code}`,
          {description, content: {'application/json': {schema: {$ref: '#/components/schemas/Error'}}}},
        ]),
      ),
    },
    security: [{bearer: []}, {}],
    paths,
  };
}
