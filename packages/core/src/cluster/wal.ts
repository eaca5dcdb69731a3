/**
 * Reading what each commit added to a SQLite write-ahead log, so that it can be shipped elsewhere
 * (an action log in PostgreSQL) and replayed over a snapshot on another machine.
 *
 * The WAL file format (sqlite.org/fileformat.html, "The Write-Ahead Log"): a 32-byte header with
 * two salts and a checksum, then frames of a 24-byte header and one page. Every frame carries the
 * header's salts and a checksum chained from the previous frame's, and a commit frame names the
 * database size. A frame belongs to the log only if its salts match and its chain checks: stale
 * frames left by a rolled-back transaction fail that test, which is how SQLite's own recovery tells
 * them apart. So the bytes from the last shipped commit to the newest valid commit frame are
 * exactly the transactions committed since, and replaying "all segments of one generation in
 * order" rebuilds a valid WAL file that SQLite recovers on open.
 *
 * A generation is one run of the WAL between two restarts (a checkpoint resets it, with new
 * salts). gristlite turns automatic checkpoints off on documents it ships, and checkpoints only
 * after shipping everything (cluster/replica.ts), so no frame is ever checkpointed unshipped.
 */
import {closeSync, fstatSync, openSync, readSync} from 'node:fs';

const HEADER = 32;
const FRAME_HEADER = 24;
const MAGIC_LE = 0x377f0682;
const MAGIC_BE = 0x377f0683;

/** The bytes one or more commits appended to a WAL generation. */
export interface WalSegment {
  /** Which generation (counted by this reader; a new one starts at every WAL restart). */
  gen: number;
  /** Byte offset of `bytes` in that generation's WAL file (0: the segment starts with the header). */
  offset: number;
  bytes: Buffer;
}

/** SQLite's WAL checksum over `buf[start, end)`, seeded with (s0, s1): pairs of 32-bit words summed. */
export function walChecksum(buf: Buffer, start: number, end: number, s0: number, s1: number, bigEndian: boolean) {
  let a = s0 >>> 0;
  let b = s1 >>> 0;
  for (let i = start; i < end; i += 8) {
    const x0 = bigEndian ? buf.readUInt32BE(i) : buf.readUInt32LE(i);
    const x1 = bigEndian ? buf.readUInt32BE(i + 4) : buf.readUInt32LE(i + 4);
    a = (a + x0 + b) >>> 0;
    b = (b + x1 + a) >>> 0;
  }
  return [a, b] as const;
}

/** Thrown when frames were checkpointed before they were read (a gap: the log cannot be continued). */
export class WalGap extends Error {}

/**
 * Follows one database's WAL file: `read()` returns what was committed since the last call (or
 * null), and notices a restart (new salts) as a new generation.
 */
export class WalTail {
  /** Bytes of the current generation already returned (0: nothing yet, not even the header). */
  private offset = 0;
  private salts: [number, number] | null = null;
  private sums: readonly [number, number] = [0, 0];

  constructor(
    private readonly walPath: string,
    private gen = 0,
  ) {}

  /** The generation the next segment belongs to, and where in it. */
  get position(): {gen: number; offset: number} {
    return {gen: this.gen, offset: this.offset};
  }

  /**
   * Starts a new generation: call right after a checkpoint that truncated the WAL (the next
   * commit writes a fresh header).
   */
  restart(): void {
    this.gen++;
    this.offset = 0;
    this.salts = null;
    this.sums = [0, 0];
  }

  /**
   * What was committed since the last call, or null. Throws WalGap when the WAL was restarted
   * after frames this reader had not returned (they are in the database file only).
   */
  read(): WalSegment | null {
    let fd: number;
    try {
      fd = openSync(this.walPath, 'r');
    } catch (e) {
      if ((e as {code?: string}).code === 'ENOENT') return this.emptyWal();
      throw e;
    }
    try {
      const size = fstatSync(fd).size;
      if (size < HEADER) return this.emptyWal();
      const header = Buffer.alloc(HEADER);
      readSync(fd, header, 0, HEADER, 0);
      const magic = header.readUInt32BE(0);
      if (magic !== MAGIC_LE && magic !== MAGIC_BE) throw new Error('not a SQLite WAL file');
      const bigEndian = magic === MAGIC_BE;
      const pageSize = header.readUInt32BE(8);
      const salts: [number, number] = [header.readUInt32BE(16), header.readUInt32BE(20)];
      let start = this.offset;
      let sums = this.sums;
      if (this.salts && (this.salts[0] !== salts[0] || this.salts[1] !== salts[1])) {
        // Restarted behind our back: whatever followed our offset in the old generation is lost to us.
        throw new WalGap('the WAL restarted before all its frames were shipped');
      }
      if (this.offset === 0) {
        const [a, b] = walChecksum(header, 0, 24, 0, 0, bigEndian);
        if (a !== header.readUInt32BE(24) || b !== header.readUInt32BE(28)) return null; // header not written yet
        sums = [a, b];
        start = 0;
      }
      const frameSize = FRAME_HEADER + pageSize;
      const from = Math.max(start, HEADER);
      const avail = size - from;
      if (avail < frameSize) return null;
      const body = Buffer.alloc(avail - (avail % frameSize));
      readSync(fd, body, 0, body.length, from);
      let commitEnd = -1;
      let commitSums = sums;
      for (let pos = 0; pos + frameSize <= body.length; pos += frameSize) {
        if (body.readUInt32BE(pos + 8) !== salts[0] || body.readUInt32BE(pos + 12) !== salts[1]) break;
        const first = walChecksum(body, pos, pos + 8, sums[0], sums[1], bigEndian);
        const next = walChecksum(body, pos + FRAME_HEADER, pos + frameSize, first[0], first[1], bigEndian);
        if (next[0] !== body.readUInt32BE(pos + 16) || next[1] !== body.readUInt32BE(pos + 20)) break;
        sums = next;
        if (body.readUInt32BE(pos + 4) !== 0) {
          commitEnd = pos + frameSize;
          commitSums = sums;
        }
      }
      if (commitEnd < 0) return null;
      const bytes =
        start === 0 ? Buffer.concat([header, body.subarray(0, commitEnd)]) : Buffer.from(body.subarray(0, commitEnd));
      const segment = {gen: this.gen, offset: start, bytes};
      this.offset = from + commitEnd;
      this.salts = salts;
      this.sums = commitSums;
      return segment;
    } finally {
      closeSync(fd);
    }
  }

  /** An absent or empty WAL: fine before the first commit of a generation, a gap after it. */
  private emptyWal(): null {
    if (this.offset > 0) throw new WalGap('the WAL was truncated before all its frames were shipped');
    return null;
  }
}
