/**
 * Extension guessing for uploads, as Grist's `guessExt` does it (SPEC §12.1): a `.json` MIME type
 * wins, `.csv` names are trusted, a name extension that agrees with the MIME type is kept, and
 * otherwise the content is sniffed, then the name extension, then the MIME type's extension.
 */
import {extname} from 'node:path/posix';
import {fileTypeFromBuffer} from 'file-type';
import mime from 'mime-types';

/**
 * The extension (with its dot, lower-case, or `""`) Grist would record for an upload named
 * `fileName`, sent with the part Content-Type `mimeType` (null when absent), holding `data`.
 */
export async function guessExt(data: Uint8Array, fileName: string, mimeType: string | null): Promise<string> {
  const origExt = extname(fileName).toLowerCase();
  // mime-types refuses anything that is not a well-formed type (an invalid or header-injected
  // Content-Type gives no extension at all, so it cannot influence the result).
  const mimeExtRaw = mimeType ? mime.extension(mimeType) : false;
  const mimeExt = mimeExtRaw ? `.${mimeExtRaw}` : null;
  if (mimeExt === '.json') return mimeExt;
  if (origExt === '.csv') return origExt;
  if (origExt && (origExt === mimeExt || mime.lookup(origExt.slice(1)) === mimeType)) return origExt;
  const detected = data.byteLength ? await fileTypeFromBuffer(data) : undefined;
  if (detected) return `.${detected.ext}`;
  return origExt || mimeExt || '';
}

/**
 * The Content-Type Grist (Express `res.type(ext)`) sends for a file extension: the registered type
 * or `application/octet-stream`, with `; charset=utf-8` for text, JavaScript and JSON.
 */
export function contentTypeForExt(ext: string): string {
  const type = (ext && mime.lookup(ext)) || 'application/octet-stream';
  return /^text\/|^application\/(javascript|json)/.test(type) ? `${type}; charset=utf-8` : type;
}
