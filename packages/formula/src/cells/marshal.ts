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
  const m = new Marshaller(options?.sortKeys === true);
  m.write(value);
  return m.result();
}

class Marshaller {
  private buf = Buffer.allocUnsafe(64);
  private pos = 0;

  constructor(private readonly sortKeys: boolean) {}

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
  }

  private code(c: string): void {
    this.reserve(1);
    this.buf[this.pos++] = c.charCodeAt(0);
  }

  private int32(v: number): void {
    this.reserve(4);
    this.buf.writeInt32LE(v, this.pos);
    this.pos += 4;
  }

  private raw(b: Uint8Array): void {
    this.int32(b.length);
    this.reserve(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  write(value: unknown): void {
    if (value === null || value === undefined) {
      this.code('N');
    } else if (value === true) {
      this.code('T');
    } else if (value === false) {
      this.code('F');
    } else if (typeof value === 'number') {
      if (Number.isInteger(value) && value >= -0x80000000 && value < 0x80000000 && !Object.is(value, -0)) {
        this.code('i');
        this.int32(value);
      } else {
        this.code('g');
        this.reserve(8);
        this.buf.writeDoubleLE(value, this.pos);
        this.pos += 8;
      }
    } else if (typeof value === 'string') {
      this.code('u');
      // Written in place (a string takes at most 3 bytes per UTF-16 unit): no buffer per string.
      this.reserve(4 + value.length * 3);
      const n = this.buf.write(value, this.pos + 4, 'utf8');
      this.buf.writeInt32LE(n, this.pos);
      this.pos += 4 + n;
    } else if (value instanceof Uint8Array) {
      this.code('s');
      this.raw(value);
    } else if (Array.isArray(value)) {
      this.code('[');
      this.int32(value.length);
      for (const item of value) {
        this.write(item);
      }
    } else if (typeof value === 'object') {
      this.code('{');
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj);
      if (this.sortKeys) {
        keys.sort();
      }
      for (const k of keys) {
        this.write(k);
        this.write(obj[k]);
      }
      this.code('0');
    } else {
      throw new MarshalError(`marshal: cannot serialise ${typeof value}`);
    }
  }
}
