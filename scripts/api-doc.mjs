// Writes docs/api.md from the route table (the same table that serves /api/openapi.json);
// with --stdout, prints it instead (packages/http/test/api-doc.test.ts compares the two).
import {writeFileSync} from 'node:fs';
import {allRoutes} from '../packages/http/dist/src/index.js';

const byTag = new Map();
for (const r of allRoutes()) {
  if (r.internal) continue;
  if (!byTag.has(r.tag)) byTag.set(r.tag, []);
  byTag.get(r.tag).push(r);
}
let out = `# API reference

Generated from the route table by \`node scripts/api-doc.mjs\` (after \`pnpm build\`). The same table
serves the OpenAPI 3.1 document at \`GET /api/openapi.json\`, with the JSON schemas of request bodies,
and the API console at \`/apiconsole\` (Swagger UI) renders it so every endpoint can be tried with a key.
The document passes \`redocly lint\` (recommended ruleset) and generates typed clients: \`openapi-typescript\`
types for \`openapi-fetch\` are in \`packages/conformance/src/generated/openapi.ts\` (regenerate with
\`node scripts/openapi-client.mjs\`).
Behaviour, status codes and error bodies follow Grist (see \`../shared/SPEC.md\` in the development
setup, and \`decisions.md\` for where gristlite chose).

Authentication: \`Authorization: Bearer <API key>\`. Team sites: \`/o/<domain>/api/...\` or a subdomain of
\`GRISTLITE_BASE_DOMAIN\`. Errors: \`{"error": "...", "details"?: {...}}\`.

## Beyond Grist: cursor pagination

\`GET .../records\`, \`GET .../data\` and \`GET .../attachments\` with \`limit\` (or \`X-Limit\`) answer, when
more rows match, a header \`Link: </api/docs/.../records?...&limit=100&cursor=...>; rel="next"\` (RFC 8288):
the same path and query (\`filter\`, \`sort\`, \`limit\`, \`hidden\`, \`cellFormat\`; \`X-Limit\`/\`X-Sort\` copied
into it) plus \`cursor\`. Follow the links until a page has none: the pages hold exactly the rows of one
unlimited request, in its order. The body is Grist's, unchanged. A cursor is a keyset position (the
last row's sort values and id, sealed by the server: opaque, and 400 \`Invalid cursor: ...\` when altered
or used with another document, table, filter or sort), not an offset: rows added or removed between
pages never repeat a row, and rows added ahead are reached; a page near the end of a large table
costs what the first one does. \`/data\` follows the cursors of \`/records\`. No \`Link\` is given for
Grist's negative \`limit\`, for sorts of more than about 25 columns, or when the last row's sort
values would make a cursor over 8 KB (decision D55).

## Beyond Grist: conditions, counts and writes by condition

\`GET .../records\`, \`GET .../data\` and \`POST .../records/list\` take \`where\`, a condition in Grist's formula
language (\`$Price > 10 and $Status in ("Open", "Late")\`, \`not $Due or $Due < TODAY()\`,
\`$Owner.Email == "a@b.c"\`, \`$Name.startswith("A")\`, \`$Tags and "red" in $Tags\`): only the rows for which
a formula column holding it would be true come back, with \`filter\`, \`sort\`, \`limit\`, \`hidden\` and the
cursor as usual. \`count=true\` (\`"count": true\` in \`/records/list\`) answers \`{"count": N}\` instead of the
rows. \`PATCH .../records?where=...\` with \`{"fields": {...}}\` updates every matching row and
\`POST .../records/delete?where=...\` (no body) removes them, each as one write, answering
\`{"records": [{"id": ...}]}\`; a write names its rows (\`where=True\`: all of them) and touches at most
\`GRISTLITE_WHERE_MAX_ROWS\` (50000). A malformed condition, an unknown (or hidden) column, one longer than
\`GRISTLITE_WHERE_MAX_CHARS\` (4096) or slower than the formula time budget is a 400 in the formula's words.
Semantics, access rules and what runs in SQL: \`queries.md\`.

\`GET .../tables/{t}/aggregate?group_by=Status&agg=count,sum:Amount\` groups rows by columns with \`count\`,
\`sum\`, \`avg\`, \`min\`, \`max\` and \`count_distinct\` of columns (answered as \`count\`, \`sum_Amount\`, ...),
taking \`where\`, \`having\` (a Python condition over those names: \`count > 2 and sum_Amount > 10\`),
\`sort\` (\`-count\`) and \`limit\`; it answers \`{"records": [{"fields": {...}}]}\`, a Ref group column by id
with its text in \`display\`, over what the caller can read, at most \`GRISTLITE_AGGREGATE_MAX_GROUPS\` (10000)
groups. Semantics: \`queries.md\`.

## Beyond Grist: idempotent writes

Every write to a document's contents (\`POST\`, \`PATCH\`, \`PUT\`, \`DELETE\` under \`/api/docs/{doc}/\`:
tables, columns, records, \`/data\`, \`/apply\`, deletes, webhooks, attachment upkeep) accepts an
\`Idempotency-Key\` header (1-255 printable ASCII characters). The first request with a key is applied and
its answer (status and body) kept in the document with the key; a repeat with the same key, route (method,
path and query), body and user within 24 hours answers those bytes again, with \`Idempotent-Replayed:
true\`, and applies nothing, even after a crash, a restart or a takeover by another worker. The same key
with another route, body or user is 422; a repeat while the first is still running is 409, as is the
rare repeat of a write applied whose answer was lost in a crash (it is never applied twice). A request
that changed nothing (refused, say) keeps nothing: its key stays free. A document keeps at most
\`GRISTLITE_IDEMPOTENCY_MAX_KEYS\` keys (default 10000, the oldest go first) and answers up to
\`GRISTLITE_IDEMPOTENCY_MAX_ANSWER_BYTES\` (default 1 MB; a larger answer is kept as "applied"). Uploads
and writes to the home database (\`/api/docs/{doc}\` itself, access, moves, copies) refuse a key with 400;
reads ignore it (decision D56).

## Beyond Grist: document API keys

\`POST /api/docs/{doc}/apikeys\` with \`{"name": "...", "access": "viewers" | "editors", "expiresAt"?: ISO 8601}\`
(owners and editors; \`owners\` access is 403) answers \`{"id": ..., "key": "gld_..."}\`: the secret, shown
once and kept only hashed in the home database. \`GET /api/docs/{doc}/apikeys\` (owners) lists \`{"apikeys":
[{"id", "name", "access", "createdBy", "createdAt", "expiresAt", "lastUsedAt"}]}\` (last use to the minute);
\`DELETE /api/docs/{doc}/apikeys/{id}\` (owners, or the key's creator) revokes it at once. A request with
\`Authorization: Bearer gld_...\` reaches only that document's \`/api/docs/{doc}/...\` routes (403 elsewhere,
for \`/copy\`, and for another document), as its creator (access rules see them as \`user\`), with the lesser of the key's
access and the creator's current role; it is 401 once revoked or expired, and cannot manage keys. Request
log lines carry \`apiKeyId\`, webhook deliveries of its writes an \`X-Gristlite-Api-Key-Id\` header. A document
holds at most 100 keys (decision D57).

## Beyond Grist: change events

\`GET /api/docs/{doc}/changes\` (viewers) answers \`text/event-stream\`: first \`event: ready\` with the
current position (\`data: {"id": ...}\`), then one \`event: change\` per committed write, in order, whose
\`data\` is one JSON object: \`kind\`, \`id\`, \`docId\`, \`time\`, \`actor\` (\`userId\`, \`email\`, \`name\`,
\`apiKeyId\` when a document API key wrote), \`schemaChanged\`, and \`tables\`: per table \`added\` and
\`updated\` rows (\`{id, fields}\`, values as \`GET /records\` gives them; updated rows carry the columns
set, listed in \`columns\`, and \`previous\`: the same columns with the values they held before the
write, D106), \`removed\` ids, and \`truncated\` counts instead of rows for writes of more
than 1000 rows (null counts under row rules: they would count rows the subscriber cannot read). Access
rules filter each event as they filter reads. \`Last-Event-ID\` (or
\`?lastEventId=\`) resumes after an event; when that is no longer possible the stream starts with
\`event: reset\` (read the data again). A comment is sent every 15 s; \`event: end\` says why a stream
ended (access lost, document removed or moved). Decision D63; \`docs/embedding.md\` for the same feed
in-process.

## Beyond Grist: HTTP revalidation

Reads of document data (\`GET .../tables\`, \`.../columns\`, \`.../records\`, \`.../data\`,
\`.../attachments\` and one attachment's metadata, the CSV/TSV/DSV and table-schema downloads) answer a
strong \`ETag\` and \`Cache-Control: private, no-cache\`. The same request with \`If-None-Match\` naming
that tag answers \`304 Not Modified\` with no body, without reading any row, until anything in the document
changes (any write, by anyone, changes every tag at once). The tag covers the document's data version, the
caller (user, email, role, document API key), the path, the query and the \`X-Sort\`/\`X-Limit\` headers, so
an answer filtered by access rules is never revalidated for another user. Tags do not survive a restart or
the document being reopened (a revalidation then answers 200 with the same body and a new tag) (decision D66).
`;
for (const [tag, routes] of byTag) {
  out += `\n## ${tag}\n\n| method | path | what | query |\n|---|---|---|---|\n`;
  for (const r of routes) out += `| ${r.method} | \`${r.path}\` | ${r.summary} | ${(r.query ?? []).join(', ')} |\n`;
}
if (process.argv.includes('--stdout')) {
  process.stdout.write(out);
  process.exit(0);
}
writeFileSync(new URL('../docs/api.md', import.meta.url), out);
console.log(`docs/api.md: ${allRoutes().filter((r) => !r.internal).length} routes`);
