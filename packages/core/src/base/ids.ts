import {randomBytes} from 'node:crypto';

const BASE58 = '123456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ';

/** A 22-character id in Grist's style (a 128-bit random number in flickr base58). */
export function makeId(): string {
  let n = BigInt('0x' + randomBytes(16).toString('hex'));
  let out = '';
  while (n > 0n) {
    out = BASE58[Number(n % 58n)] + out;
    n /= 58n;
  }
  return out.padStart(22, BASE58[0]);
}

/** A new API key: 40 lowercase hex characters (20 random bytes), as Grist makes them. */
export function makeApiKey(): string {
  return randomBytes(20).toString('hex');
}

/** The current time as ISO 8601 with milliseconds, as Grist writes timestamps. */
export function nowIso(): string {
  return new Date().toISOString();
}
