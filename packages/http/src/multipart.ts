/**
 * multipart/form-data uploads, parsed while they stream in (busboy), with the per-file size limit
 * applied as the bytes arrive. Answers as Grist's upload handling does: 415 for a body that is not
 * multipart, 400 for a broken one, 413 `Attachments must not exceed <size>` over the limit.
 */
import busboy from 'busboy';
import { ApiError, BadRequest, attachmentTooLarge, type UploadedFile } from '@gristlite/core';
import type { RequestBody } from './types.js';

export interface ParsedForm {
  /** Files of each field, in arrival order. */
  files: Map<string, UploadedFile[]>;
  /** Plain (non-file) fields; the first value of each. */
  fields: Map<string, string>;
}

async function* chunksOf(body: RequestBody): AsyncIterable<Uint8Array> {
  if (!body) return;
  if (body instanceof Uint8Array) {
    yield body;
    return;
  }
  yield* body;
}

/**
 * Parses a multipart body. `maxFileBytes` (0: unlimited) bounds each file and, since files are
 * held in memory until stored, the sum of all files; going over stops the parse with 413 without
 * buffering the rest.
 */
export async function parseMultipart(
  headers: Record<string, string | undefined>,
  body: RequestBody,
  maxFileBytes: number,
): Promise<ParsedForm> {
  const contentType = headers['content-type'] ?? '';
  if (!/^multipart\/form-data\s*(;|$)/i.test(contentType.trim())) {
    throw new ApiError(415, 'unsupported content-type');
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      defParamCharset: 'utf8',
      limits: maxFileBytes > 0 ? { fileSize: maxFileBytes } : {},
    });
  } catch (e) {
    throw new BadRequest((e as Error).message);
  }
  const form: ParsedForm = { files: new Map(), fields: new Map() };
  let failure: Error | null = null;
  let total = 0;
  const fail = (e: Error) => {
    failure ??= e;
  };
  const done = new Promise<void>((resolve) => {
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => {
        total += c.byteLength;
        if (maxFileBytes > 0 && total > maxFileBytes) {
          // Files are held in memory until stored: the limit bounds the whole upload too.
          fail(attachmentTooLarge(maxFileBytes));
          return;
        }
        if (!failure) chunks.push(c);
      });
      stream.on('limit', () => {
        fail(attachmentTooLarge(maxFileBytes));
        stream.resume();
      });
      stream.on('end', () => {
        if (failure) return;
        const list = form.files.get(name) ?? [];
        list.push({
          fileName: info.filename ?? '',
          mimeType: info.mimeType || null,
          data: Buffer.concat(chunks),
        });
        form.files.set(name, list);
      });
    });
    parser.on('field', (name, value) => {
      if (!form.fields.has(name)) form.fields.set(name, value);
    });
    parser.on('error', (e: Error) => {
      fail(new BadRequest(/Unexpected end of form/i.test(e.message) ? 'stream ended unexpectedly' : e.message));
      resolve();
    });
    parser.on('close', () => resolve());
  });
  try {
    for await (const chunk of chunksOf(body)) {
      if (failure) break;
      if (!parser.write(chunk)) await new Promise<void>((r) => parser.once('drain', () => r()));
    }
    parser.end();
  } catch (e) {
    fail(e instanceof ApiError ? e : new BadRequest((e as Error).message));
    parser.destroy();
    return Promise.reject(failure);
  }
  if (!failure) await done;
  if (failure) throw failure;
  return form;
}
