import {ApiError, BadRequest, PayloadTooLarge} from '@gristlite/core/internal';
import type {RequestBody} from './types.js';

/**
 * The client went away (or its connection broke) before its body was complete. Nobody is left
 * to read the answer; it is not an error of the server and is not logged.
 */
export class RequestAborted extends ApiError {
  constructor(reason = '') {
    super(400, `request aborted${reason ? ` (${reason})` : ''}`);
  }
}

/** The chunks of a body, whatever form the adapter gave it in. */
export async function* bodyChunks(body: RequestBody): AsyncIterable<Uint8Array> {
  if (!body) return;
  if (body instanceof Uint8Array) {
    yield body;
    return;
  }
  yield* body;
}

/**
 * The 413 of a body over `limit` bytes: Grist's text, then the limit and the setting that raises
 * it (D65), so that an operator knows what to change.
 */
export function bodyTooLarge(limit: number, setting = 'GRISTLITE_MAX_BODY_BYTES'): PayloadTooLarge {
  return new PayloadTooLarge(`request entity too large (over ${limit} bytes: ${setting})`);
}

/**
 * Reads a whole body, refusing (413) as soon as it passes `limit` bytes. Reading stops there: the
 * rest is never read (the adapter closes the connection after answering).
 */
export async function readBody(body: RequestBody, limit: number, setting?: string): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  if (body instanceof Uint8Array) {
    if (body.byteLength > limit) throw bodyTooLarge(limit, setting);
    return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  // Not `for await`: leaving that loop early destroys a Node request, and its socket with it,
  // before the 413 can be sent.
  const it = body[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<Uint8Array>;
    try {
      next = await it.next();
    } catch (e) {
      throw new RequestAborted((e as Error).message);
    }
    if (next.done) break;
    size += next.value.byteLength;
    if (size > limit) throw bodyTooLarge(limit, setting);
    // A view, not a copy: Buffer.concat below makes the one copy (as a bare server's read does).
    const v = next.value;
    chunks.push(Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength));
  }
  return Buffer.concat(chunks);
}

export function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0].trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

/**
 * Express `json({strict: true})`: only objects and arrays at the top level. A body starting with
 * anything else is refused before it is parsed, with the message body-parser makes: the parser's
 * own error for the same text with everything from that character on masked, then unmasked
 * (`"hello"` -> `Unexpected token '"', ""hello"" is not valid JSON` on Node 20-24).
 */
export function parseJsonBody(buf: Buffer): unknown {
  const text = buf.toString('utf8');
  if (text.trim() === '') return {};
  const first = /^[ \t\n\r]*([^ \t\n\r])/.exec(text)?.[1];
  if (first !== undefined && first !== '{' && first !== '[') {
    throw new BadRequest(strictViolation(text, first));
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new BadRequest((e as Error).message);
  }
}

function strictViolation(text: string, first: string): string {
  const at = text.indexOf(first);
  const masked = text.slice(0, at) + '#'.repeat(text.length - at);
  try {
    JSON.parse(masked);
  } catch (e) {
    return (e as Error).message.replace(/#+/g, (run) => text.slice(at, at + run.length));
  }
  return 'strict violation';
}
