/**
 * A zip file (XLSX) checked before anything unpacks it: its central directory read from the end
 * of the file, every entry found where the directory says, the entries back to back with nothing
 * hidden between them (a streaming unzipper reads the local headers in file order, so it sees
 * exactly what was checked), and every entry inflated once with a running count, stopped as soon
 * as the file as a whole would unpack to more than the allowed bytes or an entry to more than it
 * declares. A zip bomb costs at most that many bytes of inflating, in small chunks, and answers
 * 400; a truncated or damaged file answers 400 saying what is wrong.
 */
import {closeSync, openSync, readSync, fstatSync} from 'node:fs';
import {createInflateRaw, inflateRawSync} from 'node:zlib';
import {BadRequest} from '../base/index.js';

/** Bounds of an uploaded zip file (docs/imports.md lists their settings). */
export interface ZipLimits {
  /** Bytes all entries may unpack to together (GRISTLITE_IMPORT_MAX_UNZIPPED_BYTES). */
  maxUnzippedBytes: number;
  /** Entries a file may hold. */
  maxEntries: number;
}

/** One entry of the central directory. */
export interface ZipEntry {
  name: string;
  method: number;
  flags: number;
  compressedSize: number;
  size: number;
  localOffset: number;
  /** Where the entry ends in the file (its local header, data and data descriptor), once checked. */
  end?: number;
}

/** A checked zip file: its entries and where its directory starts. */
export interface CheckedZip {
  entries: ZipEntry[];
  dirOffset: number;
}

const EOCD_SIG = 0x06054b50;
const CDH_SIG = 0x02014b50;
const LOCAL_SIG = 0x04034b50;
const ZIP64_LOCATOR_SIG = 0x07064b50;
/** Read this much at a time when inflating an entry. */
const CHUNK = 64 * 1024;

function damaged(why: string): BadRequest {
  return new BadRequest(`The XLSX file is damaged or truncated: ${why}`);
}

function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  const n = readSync(fd, buf, 0, length, position);
  return n === length ? buf : buf.subarray(0, n);
}

/** The central directory's entries (throws 400 for a file that is not a whole zip). */
export function readZipDirectory(
  fd: number,
  fileSize: number,
  limits: ZipLimits,
): {entries: ZipEntry[]; dirOffset: number} {
  if (fileSize < 22) throw damaged('it is too short to be a zip file');
  const tailLen = Math.min(fileSize, 22 + 0xffff);
  const tail = readAt(fd, fileSize - tailLen, tailLen);
  let eocd = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === EOCD_SIG) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw damaged('no zip directory at its end');
  if (eocd >= 20 && tail.readUInt32LE(eocd - 20) === ZIP64_LOCATOR_SIG) {
    throw new BadRequest('The XLSX file is a ZIP64 archive, which gristlite does not read');
  }
  const count = tail.readUInt16LE(eocd + 10);
  const dirSize = tail.readUInt32LE(eocd + 12);
  const dirOffset = tail.readUInt32LE(eocd + 16);
  if (count > limits.maxEntries) {
    throw new BadRequest(`The XLSX file holds ${count} entries; at most ${limits.maxEntries} are read`);
  }
  const dirEnd = fileSize - tailLen + eocd;
  if (dirOffset + dirSize !== dirEnd) throw damaged('its zip directory is not where its end record says');
  const dir = readAt(fd, dirOffset, dirSize);
  const entries: ZipEntry[] = [];
  let p = 0;
  for (let i = 0; i < count; i++) {
    if (p + 46 > dir.length || dir.readUInt32LE(p) !== CDH_SIG) throw damaged('its zip directory is cut short');
    const nameLen = dir.readUInt16LE(p + 28);
    const extraLen = dir.readUInt16LE(p + 30);
    const commentLen = dir.readUInt16LE(p + 32);
    entries.push({
      flags: dir.readUInt16LE(p + 8),
      method: dir.readUInt16LE(p + 10),
      compressedSize: dir.readUInt32LE(p + 20),
      size: dir.readUInt32LE(p + 24),
      name: dir.toString('utf8', p + 46, p + 46 + nameLen),
      localOffset: dir.readUInt32LE(p + 42),
    });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return {entries, dirOffset};
}

/** Where an entry's data starts (after its local header), checked against the directory. */
function dataStart(fd: number, e: ZipEntry, fileSize: number): number {
  if (e.localOffset + 30 > fileSize) throw damaged(`entry ${e.name} lies beyond the end of the file`);
  const h = readAt(fd, e.localOffset, 30);
  if (h.length < 30 || h.readUInt32LE(0) !== LOCAL_SIG)
    throw damaged(`entry ${e.name} is not where the directory says`);
  const start = e.localOffset + 30 + h.readUInt16LE(26) + h.readUInt16LE(28);
  if (start + e.compressedSize > fileSize) throw damaged(`entry ${e.name} is cut short`);
  return start;
}

/** Inflates an entry in chunks, counting; stops past `allowed` bytes (null: within it). */
async function inflatedSize(fd: number, start: number, e: ZipEntry, allowed: number): Promise<number> {
  if (e.method === 0) return e.compressedSize;
  if (e.method !== 8)
    throw new BadRequest(`The XLSX file uses a zip compression gristlite does not read (${e.method})`);
  const inflate = createInflateRaw();
  let total = 0;
  let over = false;
  const done = new Promise<void>((resolve, reject) => {
    inflate.on('data', (c: Buffer) => {
      total += c.length;
      if (total > allowed && !over) {
        over = true;
        inflate.destroy();
        resolve();
      }
    });
    inflate.on('end', () => resolve());
    inflate.on('close', () => resolve());
    inflate.on('error', (err) =>
      over ? resolve() : reject(damaged(`entry ${e.name} does not inflate (${err.message})`)),
    );
  });
  for (let pos = 0; pos < e.compressedSize && !over; pos += CHUNK) {
    const chunk = readAt(fd, start + pos, Math.min(CHUNK, e.compressedSize - pos));
    if (!inflate.write(chunk)) {
      // Drained, or destroyed once over the bound (then no 'drain' comes).
      await new Promise<void>((r) => {
        const go = () => {
          inflate.off('drain', go);
          inflate.off('close', go);
          r();
        };
        inflate.on('drain', go);
        inflate.on('close', go);
      });
    }
    // Let the inflater run, and other requests with it.
    await new Promise((r) => setImmediate(r));
  }
  if (!over) inflate.end();
  await done;
  return total;
}

/**
 * Checks an uploaded zip file (see the module comment): 400 for a damaged or truncated file, and
 * for one that would unpack to more than `limits.maxUnzippedBytes`. Returns its entries.
 */
export async function checkZipFile(path: string, limits: ZipLimits): Promise<ZipEntry[]> {
  return (await checkZip(path, limits)).entries;
}

/** `checkZipFile`, with where the directory starts. */
export async function checkZip(path: string, limits: ZipLimits): Promise<CheckedZip> {
  const fd = openSync(path, 'r');
  try {
    const fileSize = fstatSync(fd).size;
    const {entries, dirOffset} = readZipDirectory(fd, fileSize, limits);
    const byOffset = [...entries].sort((a, b) => a.localOffset - b.localOffset);
    let expected = 0;
    let total = 0;
    for (const e of byOffset) {
      if (e.localOffset !== expected) throw damaged('its entries are not back to back');
      const start = dataStart(fd, e, fileSize);
      // A data descriptor may follow the data (with or without its signature).
      let end = start + e.compressedSize;
      if (e.flags & 8) end += end + 4 <= fileSize && readAt(fd, end, 4).readUInt32LE(0) === 0x08074b50 ? 16 : 12;
      expected = end;
      e.end = end;
      const allowed = Math.min(limits.maxUnzippedBytes - total, e.size);
      const size = await inflatedSize(fd, start, e, allowed);
      if (total + size > limits.maxUnzippedBytes) {
        throw new BadRequest(
          `The XLSX file unpacks to more than ${limits.maxUnzippedBytes} bytes (GRISTLITE_IMPORT_MAX_UNZIPPED_BYTES): not imported`,
        );
      }
      if (size > e.size) throw damaged(`entry ${e.name} unpacks to more than the ${e.size} bytes it declares`);
      if (size < e.size) throw damaged(`entry ${e.name} unpacks to ${size} bytes, not the ${e.size} it declares`);
      total += size;
    }
    if (expected !== dirOffset) throw damaged('its entries and its directory do not meet');
    return {entries, dirOffset};
  } finally {
    closeSync(fd);
  }
}

/**
 * The text of one small entry of a checked zip file (workbook.xml and its relationships), or
 * null when the file has no such entry; 400 beyond `maxBytes`.
 */
export function readZipText(path: string, entries: ZipEntry[], name: string, maxBytes: number): string | null {
  const e = entries.find((x) => x.name === name);
  if (!e) return null;
  if (e.size > maxBytes) throw new BadRequest(`The XLSX file's ${name} is larger than ${maxBytes} bytes`);
  const fd = openSync(path, 'r');
  try {
    const start = dataStart(fd, e, fstatSync(fd).size);
    const raw = readAt(fd, start, e.compressedSize);
    const data = e.method === 0 ? raw : inflateRawSync(raw, {maxOutputLength: Math.max(1, e.size)});
    return data.toString('utf8');
  } catch (err) {
    if (err instanceof BadRequest) throw err;
    throw damaged(`entry ${name} does not inflate (${(err as Error).message})`);
  } finally {
    closeSync(fd);
  }
}
