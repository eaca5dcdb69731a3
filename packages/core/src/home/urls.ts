/**
 * The URL of a document's page as Grist builds it (`getResourceUrl` and `encodeUrl` in grist-core),
 * which SELF_HYPERLINK() returns, and the server's public URL setting it is built on.
 */
import type {Doc, Org} from './types.js';

/** Grist's `MIN_URLID_PREFIX_LENGTH`: a urlId this long that starts the doc id is a default one. */
const MIN_URLID_PREFIX = 12;

/**
 * The public URL of the server (`GRISTLITE_PUBLIC_URL`, or Grist's `APP_HOME_URL`): an absolute
 * http(s) URL, perhaps with a path, without a trailing slash; null when unset. A malformed value
 * stops start-up.
 */
export function publicUrlFromEnv(env: Record<string, string | undefined>): string | null {
  const name = env.GRISTLITE_PUBLIC_URL ? 'GRISTLITE_PUBLIC_URL' : 'APP_HOME_URL';
  const raw = env[name];
  if (!raw) return null;
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    // Reported below.
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username) {
    throw new Error(
      `${name} must be an absolute http or https URL without query or fragment, got ${JSON.stringify(raw)}`,
    );
  }
  return url.href.replace(/\/+$/, '');
}

/** The org as Grist's URLs name it: personal orgs are the merged `docs`, team sites their domain, else `o-<id>`. */
export function orgUrlName(org: Pick<Org, 'id' | 'domain' | 'ownerId'>): string {
  if (org.ownerId !== null && (!org.domain || org.domain === `docs-${org.ownerId}`)) return 'docs';
  return org.domain || `o-${org.id}`;
}

// Letters that Unicode decomposition leaves whole, spelt out as Grist's slugs (slugify) spell them.
const SPELT: Record<string, string> = {
  ß: 'ss',
  Æ: 'AE',
  æ: 'ae',
  Ø: 'O',
  ø: 'o',
  Œ: 'OE',
  œ: 'oe',
  Đ: 'DJ',
  đ: 'dj',
  Ł: 'L',
  ł: 'l',
  Þ: 'TH',
  þ: 'th',
  Ð: 'D',
  ð: 'd',
  ı: 'i',
  $: 'dollar',
  '%': 'percent',
  '&': 'and',
  '<': 'less',
  '>': 'greater',
  '|': 'or',
};

/**
 * A document name as the slug of Grist's URLs (`slugify(name, {strict: true})`): ASCII letters and
 * digits, words joined by `-`. Accented Latin letters lose their accents; letters of other scripts
 * are dropped (slugify spells some of them in Latin), which only changes a slug Grist ignores.
 */
export function docSlug(name: string): string {
  return [...name.normalize('NFKD')]
    .map((ch) => (ch === '-' ? ' ' : (SPELT[ch] ?? ch)))
    .join('')
    .replace(/[^A-Za-z0-9\s]/g, '')
    .trim()
    .replace(/\s+/g, '-');
}

/**
 * The URL of a document's page: `<base>/o/<org>/<urlId>/<slug>` when the urlId is Grist's default
 * (a prefix of the id, at least 12 characters) and the name gives a slug, else
 * `<base>/o/<org>/doc/<urlId or id>`. The org is always in the path (Grist puts it in the host
 * name when it uses subdomains); gristlite resolves both forms.
 */
export function docPageUrl(
  base: string,
  doc: Pick<Doc, 'id' | 'urlId' | 'name'>,
  org: Pick<Org, 'id' | 'domain' | 'ownerId'>,
): string {
  const key = doc.urlId || doc.id;
  const prefix = `${base.replace(/\/+$/, '')}/o/${orgUrlName(org)}/`;
  const defaultUrlId = doc.urlId !== null && doc.urlId.length >= MIN_URLID_PREFIX && doc.id.startsWith(doc.urlId);
  const slug = defaultUrlId ? docSlug(doc.name) : '';
  return slug
    ? `${prefix}${encodeURIComponent(key)}/${encodeURIComponent(slug)}`
    : `${prefix}doc/${encodeURIComponent(key)}`;
}
