/**
 * Which webhook target URLs are allowed (SPEC §13.1, issue 4): Grist's `ALLOWED_WEBHOOK_DOMAINS`
 * rules, plus a check of the addresses a name resolves to, so that loopback and private networks
 * are reachable only when an entry names them explicitly.
 *
 * Entries are `host` or `host:port`, comma-separated; `*` allows every public host (http or
 * https). Without `*`, https is required except for `localhost` and loopback/private IP literals.
 * A URL matches an entry when its host (with a non-default port) equals the entry, or ends with
 * `.entry`. "Explicitly named" means an exact match (with `*` present, an entry without a port
 * names its host at any port); only such hosts may be, or resolve to, a private address.
 */
import {lookup as dnsLookup, type LookupAddress} from 'node:dns';
import {BlockList, isIP} from 'node:net';
import {Forbidden} from '../base/index.js';

/** A DNS lookup returning every address (injectable for tests). */
export type LookupAll = (
  hostname: string,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/** Which webhook URLs are allowed: the allow-list (`ALLOWED_WEBHOOK_DOMAINS`) and the lookup. */
export interface WebhookUrlPolicy {
  /** Allow-list entries, lower-case, empty ones removed. Empty: nothing is allowed. */
  entries: readonly string[];
  /** Name resolution (default: the system resolver, every address). Injectable for tests. */
  lookup?: LookupAll;
  /** Longest wait for a resolution at creation time before the URL is accepted on its name alone. */
  lookupTimeoutMs?: number;
}

/** The policy from `GRISTLITE_ALLOWED_WEBHOOK_DOMAINS`, else `ALLOWED_WEBHOOK_DOMAINS`. */
export function webhookPolicyFromEnv(env: Record<string, string | undefined>): WebhookUrlPolicy {
  const raw = env.GRISTLITE_ALLOWED_WEBHOOK_DOMAINS ?? env.ALLOWED_WEBHOOK_DOMAINS ?? '';
  return {entries: parseAllowList(raw)};
}

/** The allow-list entries of a comma-separated setting, lower-case, empty ones dropped. */
export function parseAllowList(raw: string): string[] {
  return raw
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
}

const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  PRIVATE.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['64:ff9b:1::', 48],
  ['100::', 64],
] as const) {
  PRIVATE.addSubnet(net, prefix, 'ipv6');
}

/** Loopback, private, link-local, shared, reserved, documentation and multicast addresses. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 4) return PRIVATE.check(bare, 'ipv4');
  if (family === 6) {
    // NAT64 (64:ff9b::/96) embeds an IPv4 address in its last 32 bits.
    const m = /^64:ff9b::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(bare);
    if (m) {
      const n = (parseInt(m[1], 16) << 16) | parseInt(m[2], 16);
      return PRIVATE.check([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.'), 'ipv4');
    }
    return PRIVATE.check(bare, 'ipv6'); // IPv4-mapped addresses are checked against the IPv4 rules.
  }
  return false;
}

/** How a webhook URL is classed: forbidden, public, or allowed by the allow-list. */
export type UrlClass = 'forbidden' | 'public' | 'explicit';

function isLocalName(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost');
}

/**
 * The static part of the check (no resolution): `forbidden`, `explicit` (an entry names the host:
 * it may be private), or `public` (allowed through `*` or a parent domain: it must resolve to
 * public addresses only).
 */
export function classifyUrl(urlString: string, policy: WebhookUrlPolicy): UrlClass {
  let url: URL;
  try {
    url = new URL(urlString);
  } catch {
    return 'forbidden';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'forbidden';
  const host = url.host.toLowerCase();
  const hostname = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const hostnameForMatch = url.hostname.toLowerCase();
  const wildcard = policy.entries.includes('*');
  const named = policy.entries.filter((e) => e !== '*');
  const exact = named.includes(host) || (wildcard && named.includes(hostnameForMatch));
  const suffix = named.some((e) => host.endsWith(`.${e}`));
  const ipLiteral = isIP(hostname) !== 0;
  const privateTarget = isLocalName(hostname) || (ipLiteral && isPrivateAddress(hostname));
  if (!wildcard && url.protocol === 'http:' && !(privateTarget && (exact || hostname === 'localhost')))
    return 'forbidden';
  if (exact) return 'explicit';
  if (!(wildcard || suffix)) return 'forbidden';
  return privateTarget ? 'forbidden' : 'public';
}

/** Resolves every address of a name (system resolver unless the policy gives one). */
function resolveAll(hostname: string, policy: WebhookUrlPolicy): Promise<LookupAddress[] | null> {
  const lookup: LookupAll = policy.lookup ?? ((h, cb) => dnsLookup(h, {all: true}, cb));
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), policy.lookupTimeoutMs ?? 3000);
    timer.unref?.();
    lookup(hostname, (err, addresses) => {
      clearTimeout(timer);
      resolve(err ? null : addresses);
    });
  });
}

/** Grist's answer to a webhook URL it does not allow. */
const FORBIDDEN = 'Provided url is forbidden';

/** Why a URL may be refused, without echoing the server's allow-list to the caller. */
function policyHint(policy: WebhookUrlPolicy): string {
  if (!policy.entries.length) return 'the server allows no webhook target: set GRISTLITE_ALLOWED_WEBHOOK_DOMAINS';
  return "webhook targets are limited by the server's GRISTLITE_ALLOWED_WEBHOOK_DOMAINS: http and https URLs of its hosts, private addresses only when named";
}

/**
 * Throws 403 `Provided url is forbidden` (with a hint) unless the URL is allowed, resolving a name allowed only
 * through `*` or a parent domain to check that none of its addresses is private. A name that does
 * not resolve now is accepted on its name (deliveries check the address again when connecting).
 */
export async function checkWebhookUrl(urlString: string, policy: WebhookUrlPolicy): Promise<void> {
  const cls = classifyUrl(urlString, policy);
  // Grist's words first (clients may match them), then what the operator can do about it.
  if (cls === 'forbidden') throw new Forbidden(`${FORBIDDEN} (${policyHint(policy)})`);
  if (cls === 'explicit') return;
  const hostname = new URL(urlString).hostname.replace(/^\[|\]$/g, '');
  if (isIP(hostname)) return;
  const addresses = await resolveAll(hostname, policy);
  if (addresses?.some((a) => isPrivateAddress(a.address))) {
    throw new Forbidden(
      `${FORBIDDEN} (its host resolves to a private address: name the host itself in GRISTLITE_ALLOWED_WEBHOOK_DOMAINS to allow it)`,
    );
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for sockets (undici's `connect.lookup`) that refuses to connect to a private address:
 * used for URLs allowed only as public, so a name that starts resolving to 127.0.0.1 is caught
 * at the moment of connecting.
 */
export function publicOnlyLookup(policy: WebhookUrlPolicy) {
  return socketLookup(policy, true);
}

/** A socket `lookup` using the policy's resolver; with `publicOnly`, private addresses are refused. */
export function socketLookup(policy: WebhookUrlPolicy, publicOnly: boolean) {
  const lookup: LookupAll = policy.lookup ?? ((h, cb) => dnsLookup(h, {all: true}, cb));
  return (hostname: string, options: {all?: boolean}, callback: LookupCallback): void => {
    lookup(hostname, (err, addresses) => {
      if (err) return callback(err, options.all ? [] : '', undefined);
      if (!addresses.length || (publicOnly && addresses.some((a) => isPrivateAddress(a.address)))) {
        const e: NodeJS.ErrnoException = new Error('Provided url is forbidden');
        e.code = 'EFORBIDDEN';
        return callback(e, options.all ? [] : '', undefined);
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
