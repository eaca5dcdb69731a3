/**
 * multipart/form-data uploads, parsed while they stream in (@fastify/busboy) and written to
 * private temporary files as they arrive: an upload is never held whole in memory, and the size
 * limit is applied byte by byte. Answers as Grist's upload handling does: 415 for a body that is
 * not multipart, 400 for a broken or truncated one, 413 `Attachments must not exceed <size>` over
 * the limit. Whatever happens, nothing is left on disk once the request is answered (the caller
 * removes the form's directory) and no stream is left without an 'error' listener.
 */
import {createWriteStream, type WriteStream} from 'node:fs';
import {mkdir, mkdtemp, readdir, rm} from 'node:fs/promises';
import {join} from 'node:path';
import type {Readable} from 'node:stream';
import {Busboy, type BusboyFileStream, type BusboyInstance} from '@fastify/busboy';
import {ApiError, BadRequest, attachmentTooLarge} from '@gristlite/core/internal';
import {RequestAborted, bodyChunks, bodyTooLarge} from './body.js';
import type {FormFile, ParsedForm, RequestBody} from './types.js';

export type {FormFile, ParsedForm} from './types.js';

export interface MultipartLimits {
  /** Largest sum of the files' bytes (0: unlimited); 413 `Attachments must not exceed ...` beyond. */
  maxFileBytes: number;
  /** Largest plain field value, in bytes; 413 beyond. */
  maxFieldBytes: number;
  /** Largest whole body (files, fields and part headers), in bytes; 413 beyond. */
  maxBodyBytes: number;
  /** At most this many parts (files and fields); 413 beyond. */
  maxParts: number;
}

/** Parts in one form: attachments come several at a time, imports one. */
export const MAX_FORM_PARTS = 1000;

export function isMultipart(contentType: string | undefined): boolean {
  return /^multipart\/form-data\s*(;|$)/i.test((contentType ?? '').trim());
}

/** A new private directory for one request's upload, under `root` (created 0700). */
export async function makeUploadDir(root: string): Promise<string> {
  await mkdir(root, {recursive: true, mode: 0o700});
  return mkdtemp(join(root, `upload-${process.pid}-`));
}

/**
 * Removes what crashed or killed processes left in `root`: directories of processes that no longer
 * run. Those of live processes (several processes may share a data directory) are kept.
 */
export async function sweepUploadDirs(root: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^upload-(\d+)-/.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || processExists(pid)) continue;
    await rm(join(root, name), {recursive: true, force: true}).catch(() => undefined);
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Parses a multipart body into `dir` (from makeUploadDir). On failure the files written so far are
 * closed (the caller removes `dir`); reading stops at once, so the rest of the body is never read.
 */
export async function parseMultipart(
  headers: Record<string, string | undefined>,
  body: RequestBody,
  dir: string,
  limits: MultipartLimits,
  opts: {onField?: (name: string, value: string) => Promise<void> | void} = {},
): Promise<ParsedForm> {
  const contentType = headers['content-type'] ?? '';
  if (!isMultipart(contentType)) throw new ApiError(415, 'unsupported content-type');
  let parser: BusboyInstance;
  try {
    parser = Busboy({
      headers: {'content-type': contentType},
      defCharset: 'utf8',
      limits: {
        fieldSize: limits.maxFieldBytes,
        parts: limits.maxParts,
        ...(limits.maxFileBytes > 0 ? {fileSize: limits.maxFileBytes} : {}),
      },
    });
  } catch (e) {
    throw new BadRequest((e as Error).message);
  }
  const form: ParsedForm = {files: new Map(), fields: new Map()};
  const streams = new Set<Readable | WriteStream>();
  const writes: Promise<void>[] = [];
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  let onFailure!: () => void;
  const failed = new Promise<void>((resolve) => (onFailure = resolve));
  const fail = (e: Error) => {
    failure ??= e;
    onFailure();
    wake?.();
  };
  const tooLarge = () => attachmentTooLarge(limits.maxFileBytes);
  let fileBytes = 0;
  let fileCount = 0;
  let finished = false;

  parser.on('error', (e: unknown) => fail(parseError(e)));
  parser.on('finish', () => {
    finished = true;
    wake?.();
  });
  parser.on('partsLimit', () => fail(new ApiError(413, `A form may have at most ${limits.maxParts} parts`)));
  parser.on('field', (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
    if (valueTruncated)
      fail(new ApiError(413, `Form field ${JSON.stringify(name)} is larger than ${limits.maxFieldBytes} bytes`));
    else if (!form.fields.has(name)) {
      form.fields.set(name, value);
      // A refusal here (no access to the workspace named) stops the upload before its file.
      if (opts.onField)
        writes.push(
          Promise.resolve()
            .then(() => opts.onField!(name, value))
            .catch((e: Error) => fail(e)),
        );
    }
  });
  parser.on('file', (name: string, stream: BusboyFileStream, filename: string, _enc: string, mimeType: string) => {
    // Every stream gets its 'error' listener before anything else can happen to it.
    stream.on('error', (e: Error) => fail(parseError(e)));
    streams.add(stream);
    if (failure) {
      stream.resume();
      return;
    }
    const path = join(dir, String(++fileCount));
    const out = createWriteStream(path, {flags: 'wx', mode: 0o600});
    streams.add(out);
    const file: FormFile = {fileName: filename ?? '', mimeType: mimeType || null, path, size: 0};
    stream.on('limit', () => fail(tooLarge()));
    stream.on('data', (c: Buffer) => {
      file.size += c.byteLength;
      fileBytes += c.byteLength;
      // The limit bounds the whole upload too: attachments are stored in one transaction.
      if (limits.maxFileBytes > 0 && fileBytes > limits.maxFileBytes) fail(tooLarge());
    });
    writes.push(
      new Promise<void>((resolve) => {
        out.on('error', (e: Error) => {
          fail(e);
          resolve();
        });
        out.on('close', () => resolve());
        stream.on('end', () => {
          if (!failure) {
            const list = form.files.get(name) ?? [];
            list.push(file);
            form.files.set(name, list);
          }
        });
        stream.pipe(out);
      }),
    );
  });

  // The body is read chunk by chunk, each written once the parser took the previous one. On a
  // failure reading stops (the iterator is left, not returned: returning it would destroy the
  // connection before the 4xx is sent).
  const it = bodyChunks(body)[Symbol.asyncIterator]();
  let received = 0;
  const wait = (register: (done: () => void) => void) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      register(resolve);
    }).finally(() => {
      wake = null;
    });
  try {
    while (!failure) {
      // biome-ignore lint/suspicious/noConfusingVoidType: what the guarded read below resolves to when it is cut short
      let next: IteratorResult<Uint8Array> | void;
      try {
        // A failure (a file that cannot be written) answers without waiting for more bytes.
        next = await Promise.race([it.next(), failed]);
      } catch (e) {
        fail(e instanceof ApiError ? e : new RequestAborted((e as Error).message));
        break;
      }
      if (failure || !next) break;
      if (next.done) {
        parser.end();
        break;
      }
      received += next.value.byteLength;
      if (received > limits.maxBodyBytes) {
        fail(limits.maxFileBytes > 0 ? tooLarge() : bodyTooLarge(limits.maxBodyBytes));
        break;
      }
      if (!parser.write(next.value)) await wait((done) => parser.once('drain', done));
    }
    if (!failure && !finished) await wait((done) => parser.once('finish', done));
  } finally {
    if (failure) {
      // Unblock and close everything: the parser, the parts, the files being written.
      for (const s of streams) s.destroy();
      parser.destroy();
    }
    await Promise.all(writes);
  }
  if (failure) throw failure;
  return form;
}

/** The parser's complaints, as the 400 Grist gives for a broken upload. */
function parseError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  const message = e instanceof Error ? e.message : String(e);
  if (/unexpected end|terminated early/i.test(message)) return new BadRequest('stream ended unexpectedly');
  return new BadRequest(message);
}

/** Removes an upload directory and everything in it. */
export async function removeUploadDir(dir: string): Promise<void> {
  await rm(dir, {recursive: true, force: true, maxRetries: 3});
}
