import { BadRequest, PayloadTooLarge } from '@gristlite/core';
import type { RequestBody } from './types.js';

/** Reads a whole body, refusing (413) as soon as it passes `limit` bytes. */
export async function readBody(body: RequestBody, limit: number): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  if (body instanceof Uint8Array) {
    if (body.byteLength > limit) throw new PayloadTooLarge();
    return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) throw new PayloadTooLarge();
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

export function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0].trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

/** Express `json({strict: true})`: only objects and arrays at the top level. */
export function parseJsonBody(buf: Buffer): unknown {
  const text = buf.toString('utf8');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new BadRequest((e as Error).message);
  }
  if (value === null || typeof value !== 'object') {
    throw new BadRequest(`Unexpected token ${JSON.stringify(text.trim()[0])} in JSON: the body must be an object or an array`);
  }
  return value;
}
