/**
 * SELF_HYPERLINK, from Grist's lookup functions (grist-core sandbox/grist/functions/lookup.py);
 * the others there (VLOOKUP, CONTAINS) need tables and belong to the interpreter.
 */
import {type Kwargs, PyCallable, type Value, raise, str, truthy} from '../values.js';

// ---- the document's URL ------------------------------------------------------------------------

let docUrl: string | null = null;
/**
 * Sets the URL of the document whose formulas run next (Grist's `DOC_URL`; null: unknown, and
 * SELF_HYPERLINK returns None); returns the one it replaces.
 */
export function setDocUrl(url: string | null): string | null {
  const previous = docUrl;
  docUrl = url;
  return previous;
}

/** Python's `urllib.parse.quote_plus` of a str (UTF-8; letters, digits and `_.-~` kept, space as `+`). */
export function quotePlus(s: string): string {
  let out = '';
  for (const byte of new TextEncoder().encode(s)) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9_.~-]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Python's `urllib.parse.unquote_plus` (malformed escapes kept as they are). */
function unquotePlus(s: string): string {
  const bytes: number[] = [];
  const text = s.replace(/\+/g, ' ');
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...new TextEncoder().encode(text[i]));
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/**
 * Adds link keys (`LinkKey_NAME=value` becomes `NAME_=value`, as Grist's access rules read them)
 * to a URL's query, keeping what the query held: Python's `parse_qsl` (blank values dropped), an
 * ordered dict, then `urlencode`.
 */
function withLinkKeys(url: string, kwargs: Kwargs): string {
  const hashAt = url.indexOf('#');
  const fragment = hashAt < 0 ? '' : url.slice(hashAt);
  const rest = hashAt < 0 ? url : url.slice(0, hashAt);
  const queryAt = rest.indexOf('?');
  const base = queryAt < 0 ? rest : rest.slice(0, queryAt);
  const query = new Map<string, string>();
  for (const pair of (queryAt < 0 ? '' : rest.slice(queryAt + 1)).split('&')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || eq === pair.length - 1) continue;
    query.set(unquotePlus(pair.slice(0, eq)), unquotePlus(pair.slice(eq + 1)));
  }
  for (const key of Object.keys(kwargs).sort()) {
    const parts = key.split('LinkKey_');
    if (parts.length !== 2 || parts[0] !== '') {
      raise('TypeError', `unexpected keyword argument '${key}' (not of form LinkKey_NAME)`);
    }
    query.set(`${parts[1]}_`, str(kwargs[key]));
  }
  const encoded = [...query].map(([k, value]) => `${quotePlus(k)}=${quotePlus(value)}`).join('&');
  return `${base}${encoded ? `?${encoded}` : ''}${fragment}`;
}

/**
 * `SELF_HYPERLINK(label=None, page=None, **kwargs)`: the document's URL, with `/p/<page>` for a
 * page, link keys in its query, and `"<label> "` before it (Grist's text with the HyperLink
 * widget). None while the URL is unknown.
 */
const SELF_HYPERLINK = new PyCallable('SELF_HYPERLINK', (args: Value[], kwargs: Kwargs | null) => {
  if (args.length > 2) {
    raise('TypeError', `SELF_HYPERLINK() takes from 0 to 2 positional arguments but ${args.length} were given`);
  }
  const {label: labelKw, page: pageKw, ...linkKeys} = kwargs ?? {};
  for (const [i, name] of ['label', 'page'].entries()) {
    if (i < args.length && Object.hasOwn(kwargs ?? {}, name)) {
      raise('TypeError', `SELF_HYPERLINK() got multiple values for argument '${name}'`);
    }
  }
  const label = args.length > 0 ? args[0] : (labelKw ?? null);
  const page = args.length > 1 ? args[1] : (pageKw ?? null);
  if (!docUrl) return null;
  let txt = docUrl;
  if (truthy(page)) txt += `/p/${str(page)}`;
  if (Object.keys(linkKeys).length) txt = withLinkKeys(txt, linkKeys);
  if (truthy(label)) txt = `${str(label)} ${txt}`;
  return txt;
});

export const lookupFunctions: Record<string, PyCallable> = {SELF_HYPERLINK};
