// Raw HTTP/1.1 over a socket, for what fetch cannot do: stop sending mid-body, disconnect, see an
// answer that arrives while the body is still being sent.
import {connect} from 'node:net';

export interface RawResult {
  status: number | null;
  headers: Record<string, string>;
  body: string;
  /** Body bytes written to the socket before it ended or the answer arrived. */
  sent: number;
}

export interface RawOptions {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  /** Sent at once after the head. */
  head?: Buffer;
  /** Then this many bytes of filler, in 64 KB writes that wait for the socket to drain. */
  fill?: number;
  tail?: Buffer;
  /** Chunked transfer encoding instead of Content-Length. */
  chunked?: boolean;
  /** Declared Content-Length (default: the real length). */
  contentLength?: number;
  /** Destroy the socket once this many body bytes are written (a client that goes away). */
  disconnectAfter?: number;
  /** Called once `disconnectAfter` bytes are written, before the socket is destroyed. */
  beforeDisconnect?: () => Promise<void>;
}

/** Sends one request; stops writing as soon as an answer starts arriving. */
export function rawRequest(port: number, opts: RawOptions): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let answered = false;
    let sent = 0;
    let done = false;
    const finish = (r: RawResult) => {
      if (done) return;
      done = true;
      sock.destroy();
      resolve(r);
    };
    const parse = (): RawResult | null => {
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return null;
      const lines = received.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(lines[0])?.[1] ?? NaN);
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const length = Number(headers['content-length'] ?? NaN);
      let rest = received.subarray(end + 4);
      if (headers['transfer-encoding'] === 'chunked') {
        const parts: Buffer[] = [];
        for (;;) {
          const nl = rest.indexOf('\r\n');
          if (nl < 0) return null;
          const size = parseInt(rest.subarray(0, nl).toString(), 16);
          if (rest.length < nl + 2 + size + 2) return null;
          if (size === 0) break;
          parts.push(rest.subarray(nl + 2, nl + 2 + size));
          rest = rest.subarray(nl + 2 + size + 2);
        }
        rest = Buffer.concat(parts);
      } else if (Number.isFinite(length) && rest.length < length) return null;
      return {status, headers, body: rest.toString('utf8'), sent};
    };
    sock.on('data', (d: Buffer) => {
      answered = true;
      received = Buffer.concat([received, d]);
      const r = parse();
      if (r) finish(r);
    });
    sock.on('error', () => undefined);
    sock.on('close', () => {
      const r = parse();
      finish(r ?? {status: null, headers: {}, body: received.toString(), sent});
    });
    const head = opts.head ?? Buffer.alloc(0);
    const tail = opts.tail ?? Buffer.alloc(0);
    const total = head.length + (opts.fill ?? 0) + tail.length;
    const hdrs: Record<string, string> = {Host: '127.0.0.1', ...opts.headers};
    if (opts.chunked) hdrs['Transfer-Encoding'] = 'chunked';
    else hdrs['Content-Length'] = String(opts.contentLength ?? total);
    const write = (b: Buffer) =>
      new Promise<void>((res) => {
        if (sock.destroyed || answered) return res();
        const data =
          opts.chunked && b.length
            ? Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')])
            : b;
        if (sock.write(data)) res();
        else {
          const on = () => {
            sock.off('drain', on);
            sock.off('close', on);
            res();
          };
          sock.once('drain', on);
          sock.once('close', on);
        }
      });
    (async () => {
      await new Promise<void>((r) => sock.once('connect', () => r()));
      sock.write(
        `${opts.method ?? 'POST'} ${opts.path} HTTP/1.1\r\n${Object.entries(hdrs)
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('')}\r\n`,
      );
      const pieces: Buffer[] = [head];
      for (let left = opts.fill ?? 0; left > 0; left -= 65536) pieces.push(Buffer.alloc(Math.min(65536, left), 97));
      pieces.push(tail);
      for (const p of pieces) {
        if (sock.destroyed || answered) return;
        await write(p);
        sent += p.length;
        if (opts.disconnectAfter !== undefined && sent >= opts.disconnectAfter) {
          await opts.beforeDisconnect?.();
          sock.destroy();
          return;
        }
      }
      if (opts.chunked && !sock.destroyed && !answered) sock.write('0\r\n\r\n');
    })().catch(reject);
  });
}

/** `--B` multipart pieces. */
export const BOUNDARY = 'XyZzY';
export const MULTIPART = {'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`};

export function filePartHead(name = 'a.csv'): Buffer {
  return Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="upload"; filename="${name}"\r\n\r\n`);
}

export function fieldPart(name: string, value: string): Buffer {
  return Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
}

export const FORM_END = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
