/**
 * The one normaliser of recorded answers (issue 38 §2). Grist and gristlite give the same answer in
 * different words wherever an answer names something the server made up: ids of orgs, workspaces,
 * documents and users, keys, user refs, webhook ids and secrets, timestamps, hashes and ports.
 * Each such value becomes a symbol, numbered in order of first appearance within one scenario
 * (`<org:1>`, `<doc:2>`, `<uuid:1>`): two answers are equal when they name the same things in the
 * same pattern, whatever the raw values. Everything else (row ids, cell values, error texts) is kept
 * as it is, so that it is compared exactly.
 *
 * How a value is recognised (nothing else is changed):
 * - numbers: the `id` of an object that is an org (it has `domain`), a workspace (`docs`,
 *   `isSupportWorkspace`), a document (`urlId`, `isPinned`), a user (`email` or `ref`) or a billing
 *   account (`individual`, `inGoodStanding`); keys `userId`, `orgId`, `workspaceId`, and
 *   `workspace`/`org` when they hold a number (request bodies); a bare id answered for an org or
 *   workspace made, changed or deleted; the id segment after `/orgs/`, `/workspaces/`, `/users/`
 *   in a request path or in `/api/...` paths quoted in text.
 * - strings: the id of a document (an object that is a document, a POST that made one) and its
 *   later appearances anywhere (paths, text), its default urlId (`<urlid:N>`, the first 12
 *   characters: Grist's MIN_URLID_PREFIX_LENGTH; a urlId a client chose stays as it is); a fork's
 *   id (`forkId`, and between `~` in a document id); a
 *   user's API key; a user's `ref`; UUIDs; hex digests of 32 or more digits; ISO timestamps;
 *   `http(s)://localhost:PORT` and `127.0.0.1:PORT` origins; the user id in a personal site's
 *   domain (`docs-5`).
 * - numbers under keys naming a time (`...At`, `...Time`, `timestamp`, `lastAttempt...`) when they
 *   look like milliseconds since 1970.
 */

type Kind = 'org' | 'ws' | 'doc' | 'user' | 'billing' | 'ref' | 'uuid' | 'hash' | 'key' | 'fork';

const ISO_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const HEX_DIGEST = /\b[0-9a-f]{32,}\b/g;
const ORIGIN = /\bhttps?:\/\/(?:localhost|127\.0\.0\.1)(?::\d+)?/g;
const URLID_PREFIX = 12;
/** A fork's id inside a document id: `<docId>~<forkId>~<userId>`. */
const FORK_ID = /~([0-9A-Za-z]{16,})~/g;
const PATH_ID = /\/api\/(orgs|workspaces|users)\/(\d+)\b/g;
const PATH_KINDS: Record<string, Kind> = {orgs: 'org', workspaces: 'ws', users: 'user'};
const PERSONAL_DOMAIN = /\bdocs-(\d+)\b/g;
const HOST_PORT = /\b(localhost|127\.0\.0\.1):\d+/g;
const TIME_KEY = /(At|Time|timestamp|Timestamp|Date)$/;
/** Milliseconds since 1970 between 2001 and 2100: what a time key holds, never a small count. */
const isEpochMs = (n: number) => Number.isInteger(n) && n > 1e12 && n < 4.2e12;

/** The numbers of one scenario's symbols: the same raw value always gets the same symbol. */
export class Normaliser {
  private readonly symbols = new Map<string, string>();
  private readonly counts = new Map<Kind, number>();
  /** Document ids and their default urlIds seen so far -> symbols. */
  private readonly docIds = new Map<string, string>();
  /** Their raw values, longest first, to find them inside text. */
  private docOrder: string[] = [];

  /** `keys` maps each user's API key to their name (`<key:chimpy>`), so that keys never reach a file. */
  constructor(private readonly keys: Record<string, string> = {}) {}

  /** The symbol of a raw value of a kind, made on first sight. */
  symbol(kind: Kind, raw: string | number): string {
    const k = `${kind}\u0000${raw}`;
    let s = this.symbols.get(k);
    if (!s) {
      const n = (this.counts.get(kind) ?? 0) + 1;
      this.counts.set(kind, n);
      s = `<${kind}:${n}>`;
      this.symbols.set(k, s);
      if (kind === 'doc' && typeof raw === 'string') {
        this.docIds.set(raw, s);
        // Grist's default urlId: the id's first 12 characters (MIN_URLID_PREFIX_LENGTH).
        if (raw.length > URLID_PREFIX) this.docIds.set(raw.slice(0, URLID_PREFIX), `<urlid:${n}>`);
        this.docOrder = [...this.docIds.keys()].sort((a, b) => b.length - a.length);
      }
    }
    return s;
  }

  /** A document id or default urlId seen before, as its symbol; anything else as it is. */
  private docRef(raw: string): string {
    return this.docIds.get(raw) ?? raw;
  }

  /** A request path with its ids as symbols (`/api/docs/<doc:1>/tables/Table1/records?limit=2`). */
  path(path: string): string {
    const [p, q] = splitOnce(path, '?');
    const segs = p.split('/');
    for (let i = 1; i < segs.length; i++) {
      const prev = segs[i - 1];
      const seg = decodeURIComponent(segs[i]);
      if (!seg) continue;
      if (/^\d+$/.test(seg) && (prev === 'orgs' || prev === 'workspaces' || prev === 'users')) {
        segs[i] = this.symbol(prev === 'orgs' ? 'org' : prev === 'workspaces' ? 'ws' : 'user', Number(seg));
      }
    }
    // Document ids (known ones only) anywhere in it: /compare/<doc:2>, ?sourceDocId=...
    return this.text(q === undefined ? segs.join('/') : `${segs.join('/')}?${q}`);
  }

  /**
   * A response body (or request body) with its made-up values as symbols. `made` names the kind of
   * thing a POST answers with the id of (`org`, `ws`, `doc`), when the body is that bare id.
   */
  body(value: unknown, made?: 'org' | 'ws' | 'doc'): unknown {
    if (made && (typeof value === 'number' || typeof value === 'string')) return this.symbol(made, value);
    return this.walk(value, undefined);
  }

  /** Text (a CSV file, an error message, a query string) with ids, keys, times and ports replaced. */
  text(s: string): string {
    let out = s;
    for (const [key, who] of Object.entries(this.keys)) if (key) out = out.split(key).join(`<key:${who}>`);
    for (const id of this.docOrder) out = out.split(id).join(this.docIds.get(id)!);
    out = out.replace(UUID, (m) => this.symbol('uuid', m.toLowerCase()));
    out = out.replace(HEX_DIGEST, (m) => this.symbol('hash', m));
    out = out.replace(FORK_ID, (_, id: string) => `~${this.symbol('fork', id)}~`);
    out = out.replace(ORIGIN, '<origin>').replace(HOST_PORT, '$1:<port>');
    // Ids in API paths quoted in text ("not found: /api/orgs/12/users").
    out = out.replace(
      PATH_ID,
      (_, kind: string, id: string) => `/api/${kind}/${this.symbol(PATH_KINDS[kind], Number(id))}`,
    );
    // A personal site's domain names its owner's id.
    out = out.replace(PERSONAL_DOMAIN, (_, id: string) => `docs-${this.symbol('user', Number(id))}`);
    return out;
  }

  private walk(v: unknown, key: string | undefined): unknown {
    if (typeof v === 'string') {
      if (ISO_TIME.test(v)) return '<time>';
      if (key === 'ref' && v.length >= 10) return this.symbol('ref', v);
      if (key === 'forkId') return this.symbol('fork', v);
      return this.text(v);
    }
    if (typeof v === 'number') {
      if (key && TIME_KEY.test(key) && isEpochMs(v)) return '<time>';
      const kind = key ? ID_KEYS[key] : undefined;
      return kind ? this.symbol(kind, v) : v;
    }
    if (Array.isArray(v)) return v.map((x) => this.walk(x, undefined));
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      const kind = objectKind(o);
      // The document's own id first, so that its urlId and links inside it read as the same doc.
      if (kind === 'doc' && typeof o.id === 'string') this.symbol('doc', o.id);
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(o)) {
        if (k === 'id' && kind && (typeof x === 'number' || typeof x === 'string')) out[k] = this.symbol(kind, x);
        else if (k === 'urlId' && typeof x === 'string') out[k] = this.text(this.docRef(x));
        else out[k] = this.walk(x, k);
      }
      return out;
    }
    return v;
  }
}

/** Keys whose number is a home id wherever they appear (`workspace`, `org`: in request bodies). */
const ID_KEYS: Record<string, Kind> = {userId: 'user', orgId: 'org', workspaceId: 'ws', workspace: 'ws', org: 'org'};

/** What an object of the home API is, by the keys only such an object has. */
function objectKind(o: Record<string, unknown>): Kind | undefined {
  if (!('id' in o)) return undefined;
  if ('domain' in o && 'name' in o) return 'org';
  if ('urlId' in o || 'isPinned' in o) return 'doc';
  if ('docs' in o || 'isSupportWorkspace' in o) return 'ws';
  if (('email' in o || 'ref' in o) && 'name' in o) return 'user';
  if ('individual' in o && 'inGoodStanding' in o) return 'billing';
  return undefined;
}

function splitOnce(s: string, sep: string): [string, string | undefined] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
}

/** The headers an answer is compared on: what a client acts upon (type, attachment name). */
export const COMPARED_HEADERS = ['content-type', 'content-disposition'] as const;

/** Those headers, in one spelling (`charset=utf-8` lower case, no space before `;`). */
export function normaliseHeaders(h: Record<string, string>, n: Normaliser): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of COMPARED_HEADERS) {
    const v = h[name];
    if (v !== undefined) out[name] = n.text(v.replace(/\s*;\s*/g, '; ').replace(/charset=utf-8/i, 'charset=utf-8'));
  }
  return out;
}
