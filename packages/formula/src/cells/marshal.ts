/**
 * Python marshal format, the subset Grist stores in SQLite BLOBs.
 *
 * Decoding accepts what Python (versions 2 to 4 of the format) and Grist's JS marshaller write:
 * None/True/False, int32 ('i'), int64 ('I'), long ('l'), floats ('g' binary, 'f' text), byte
 * strings ('s', interned 't', string refs 'R'), unicode ('u'), the short ascii forms of version 4
 * ('a', 'A', 'z', 'Z'), list, tuple (both become arrays), dict, and version-3 object references.
 * Encoding writes version 2, as Grist does: 'i' for int32, 'g' for other numbers, 'u' for strings,
 * 's' for binary data.
 */

const FLAG_REF = 0x80;
const utf8 = new TextDecoder();
const latin1 = new TextDecoder('latin1');

export class MarshalError extends Error {}

/** How `loads` reads what it decodes. */
export interface LoadOptions {
  /**
   * Byte strings ('s') as `Uint8Array` (a copy) rather than text: Grist's JS unmarshaller reads them
   * as buffers, so an action bundle decoded this way re-encodes to the same bytes.
   */
  bytes?: boolean;
}

/** How `dumps` writes. */
export interface DumpOptions {
  /** Dict keys in sorted order (JS string order), as Grist's JS Marshaller writes them. */
  sortKeys?: boolean;
}

/** Decodes a value in Python's marshal format (version 2) as Grist stores it. */
export function loads(buf: Uint8Array, options?: LoadOptions): unknown {
  return new Unmarshaller(buf, options?.bytes === true).load();
}

class Unmarshaller {
  private pos = 0;
  private readonly view: DataView;
  private readonly refs: unknown[] = []; // version 3+ object references
  private readonly interned: string[] = []; // version 2 interned strings ('t' / 'R')

  constructor(
    private readonly buf: Uint8Array,
    private readonly asBytes = false,
  ) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  load(): unknown {
    const value = this.read();
    if (value === DICT_END) {
      throw new MarshalError('marshal: unexpected NULL');
    }
    return value;
  }

  private need(n: number): void {
    if (this.pos + n > this.buf.length) {
      throw new MarshalError('marshal: data truncated');
    }
  }

  private int32(): number {
    this.need(4);
    const v = this.view.getInt32(this.pos, true);
    this.pos += 4;
    return v;
  }

  private bytes(n: number): Uint8Array {
    if (n < 0) {
      throw new MarshalError('marshal: negative length');
    }
    // Each item takes a byte at least: a longer count is damage, refused before it sizes an array.
    this.need(n);
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }

  private read(): unknown {
    this.need(1);
    const byte = this.buf[this.pos++];
    const flag = (byte & FLAG_REF) !== 0;
    const code = String.fromCharCode(byte & ~FLAG_REF);
    // Containers register their reference before their contents are read.
    const refIndex = flag ? this.refs.push(undefined) - 1 : -1;
    const keep = <T>(v: T): T => {
      if (flag) {
        this.refs[refIndex] = v;
      }
      return v;
    };
    switch (code) {
      case '0':
        return DICT_END;
      case 'N':
        return keep(null);
      case 'F':
        return keep(false);
      case 'T':
        return keep(true);
      case 'i':
        return keep(this.int32());
      case 'I': {
        this.need(8);
        const v = this.view.getBigInt64(this.pos, true);
        this.pos += 8;
        return keep(Number(v));
      }
      case 'l': {
        const n = this.int32();
        let v = 0;
        for (let i = 0, scale = 1; i < Math.abs(n); i++, scale *= 32768) {
          this.need(2);
          v += this.view.getUint16(this.pos, true) * scale;
          this.pos += 2;
        }
        return keep(n < 0 ? -v : v);
      }
      case 'g': {
        this.need(8);
        const v = this.view.getFloat64(this.pos, true);
        this.pos += 8;
        return keep(v);
      }
      case 'f': {
        this.need(1);
        const n = this.buf[this.pos++];
        return keep(parseFloat(latin1.decode(this.bytes(n))));
      }
      case 'u':
        return keep(utf8.decode(this.bytes(this.int32())));
      case 't': {
        const s = utf8.decode(this.bytes(this.int32()));
        this.interned.push(s);
        return keep(s);
      }
      case 's': {
        const b = this.bytes(this.int32());
        return keep(this.asBytes ? b.slice() : utf8.decode(b));
      }
      case 'R': {
        const s = this.interned[this.int32()];
        if (s === undefined) {
          throw new MarshalError('marshal: bad string reference');
        }
        return keep(s);
      }
      case 'a':
      case 'A':
        return keep(latin1.decode(this.bytes(this.int32())));
      case 'z':
      case 'Z': {
        this.need(1);
        const n = this.buf[this.pos++];
        return keep(latin1.decode(this.bytes(n)));
      }
      case '[':
      case '(':
      case '<':
      case '>':
        return this.readSeq(this.int32(), keep);
      case ')': {
        this.need(1);
        return this.readSeq(this.buf[this.pos++], keep);
      }
      case '{': {
        const obj: Record<string, unknown> = keep({});
        for (;;) {
          const key = this.read();
          if (key === DICT_END) {
            return obj;
          }
          const k = String(key);
          // `__proto__` is a key like any other (an assignment would set the prototype).
          if (k === '__proto__') {
            Object.defineProperty(obj, k, {value: this.load(), enumerable: true, writable: true, configurable: true});
          } else obj[k] = this.load();
        }
      }
      case 'r': {
        const idx = this.int32();
        if (idx < 0 || idx >= this.refs.length) {
          throw new MarshalError('marshal: bad reference');
        }
        return this.refs[idx];
      }
      default:
        throw new MarshalError(`marshal: unsupported code ${JSON.stringify(code)}`);
    }
  }

  private readSeq(n: number, keep: <T>(v: T) => T): unknown[] {
    if (n < 0) {
      throw new MarshalError('marshal: negative length');
    }
    // Each item takes a byte at least: a longer count is damage, refused before it sizes an array.
    this.need(n);
    const arr: unknown[] = keep(new Array(n));
    for (let i = 0; i < n; i++) {
      arr[i] = this.load();
    }
    return arr;
  }
}

const DICT_END = Symbol('marshal-null');

/** Serialises a JS value in marshal format version 2 (as Grist's Marshaller does). */
export function dumps(value: unknown, options?: DumpOptions): Buffer {
  const m = new MarshalWriter(options?.sortKeys === true);
  m.write(value);
  return m.result();
}

/**
 * Writes several values into one growing buffer, for callers that need spans of what they wrote
 * (an action bundle's body, whose hash covers some of its parts): one buffer instead of one per part.
 */
export class MarshalWriter {
  private buf: Buffer;
  private view: DataView;
  private pos = 0;

  constructor(
    private readonly sortKeys: boolean,
    initialBytes = 256,
  ) {
    this.buf = Buffer.allocUnsafe(initialBytes);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.pos;
  }

  /** A view of bytes written (valid until the next write). */
  span(start: number, end: number): Buffer {
    return this.buf.subarray(start, end);
  }

  /** Appends bytes as they are (already marshalled data, or a container's code). */
  bytes(b: Uint8Array): void {
    this.reserve(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Appends a list's header: `[` and its length, its items to follow. */
  listHeader(n: number): void {
    this.code(0x5b); // '['
    this.int32(n);
  }

  /** Overwrites bytes written before (a part whose value is known only later, of fixed size). */
  patch(at: number, b: Uint8Array): void {
    if (at < 0 || at + b.length > this.pos) throw new MarshalError('marshal: patch outside the written bytes');
    this.buf.set(b, at);
  }

  /** Starts again at the first byte, keeping the buffer (a writer reused for many values). */
  reset(): void {
    this.pos = 0;
  }

  /** Bytes the buffer holds (what a reused writer keeps between uses). */
  get capacity(): number {
    return this.buf.length;
  }

  /** A copy of what was written. */
  result(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.pos));
  }

  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) {
      return;
    }
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
    this.view = new DataView(next.buffer, next.byteOffset, next.byteLength);
  }

  // Codes and numbers go through a DataView and strings through a loop for short ASCII: Buffer's
  // write methods check their arguments on every call, which made a 500-row action ~140 ns a cell.
  /** Appends one type code (a container's start or end, when the caller writes its items). */
  code(c: number): void {
    this.reserve(1);
    this.buf[this.pos++] = c;
  }

  private int32(v: number): void {
    this.reserve(4);
    this.view.setInt32(this.pos, v, true);
    this.pos += 4;
  }

  private raw(b: Uint8Array): void {
    this.int32(b.length);
    this.reserve(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  private string(value: string): void {
    const len = value.length;
    // A string takes at most 3 bytes per UTF-16 unit: reserved once, written in place.
    this.reserve(5 + len * 3);
    const buf = this.buf;
    buf[this.pos] = 0x75; // 'u'
    const start = this.pos + 5;
    if (len <= 64) {
      let i = 0;
      for (; i < len; i++) {
        const c = value.charCodeAt(i);
        if (c >= 0x80) break;
        buf[start + i] = c;
      }
      if (i === len) {
        this.view.setInt32(this.pos + 1, len, true);
        this.pos = start + len;
        return;
      }
    }
    const n = buf.write(value, start, 'utf8');
    this.view.setInt32(this.pos + 1, n, true);
    this.pos = start + n;
  }

  write(value: unknown): void {
    if (value === null || value === undefined) {
      this.code(0x4e); // 'N'
    } else if (value === true) {
      this.code(0x54); // 'T'
    } else if (value === false) {
      this.code(0x46); // 'F'
    } else if (typeof value === 'number') {
      this.reserve(9);
      if (Number.isInteger(value) && value >= -0x80000000 && value < 0x80000000 && !Object.is(value, -0)) {
        this.buf[this.pos] = 0x69; // 'i'
        this.view.setInt32(this.pos + 1, value, true);
        this.pos += 5;
      } else {
        this.buf[this.pos] = 0x67; // 'g'
        this.view.setFloat64(this.pos + 1, value, true);
        this.pos += 9;
      }
    } else if (typeof value === 'string') {
      this.string(value);
    } else if (value instanceof Uint8Array) {
      this.code(0x73); // 's'
      this.raw(value);
    } else if (Array.isArray(value)) {
      this.code(0x5b); // '['
      this.int32(value.length);
      for (let i = 0; i < value.length; i++) {
        this.write(value[i]);
      }
    } else if (typeof value === 'object') {
      this.code(0x7b); // '{'
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj);
      if (this.sortKeys) {
        keys.sort();
      }
      for (const k of keys) {
        this.write(k);
        this.write(obj[k]);
      }
      this.code(0x30); // '0'
    } else {
      throw new MarshalError(`marshal: cannot serialise ${typeof value}`);
    }
  }
}
