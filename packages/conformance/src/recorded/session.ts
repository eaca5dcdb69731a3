/**
 * One scenario's run against a server, in one of two modes: `record` (the server is Grist: each
 * answer is normalised and kept, to be written as the scenario's golden file) or `replay` (the
 * server is gristlite: each answer is normalised and compared with the golden one). Scenarios are
 * written once and run in both modes, so what gristlite is held to is what Grist answered.
 */
import {createHash} from 'node:crypto';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import Database from 'better-sqlite3';
import type {ApiResponse, Client} from '../client.js';
import {type Answer, compareAnswers, type Difference, diffValues, type Level} from './compare.js';
import {Normaliser, normaliseHeaders} from './normalise.js';

/** Who makes a call: one of the three test users, or nobody (no key). */
export type Who = 'chimpy' | 'kiwi' | 'charon' | 'anon';

export interface SessionUser {
  email: string;
  name: string;
  key: string;
}

/** One step of a golden file: the request as made (normalised) and Grist's answer. */
export interface RecordedStep {
  step: string;
  request: {user: Who; method: string; path: string; body?: unknown};
  answer: Answer;
}

/** A scenario's golden file. */
export interface Golden {
  scenario: string;
  grist: string;
  steps: RecordedStep[];
}

/** A step whose answer differs from Grist's on purpose: the decision, and how it still compares. */
export interface ListedDifference {
  /** `skip`: not compared at all (the step cannot give the same answer, e.g. a feature Grist lacks). */
  level: Level | 'skip';
  /** The numbered decision in docs/decisions.md (D.., DA..), or `harness` for a limit of the harness. */
  decision: string;
  why: string;
}

/**
 * A difference allowed at one JSON path in every step (`body.actionNum`), for a decision that
 * changes one field wherever it appears: the field is left out of the comparison, nothing else.
 */
export interface PathDifference {
  path: RegExp;
  decision: string;
  why: string;
}

/** What a call may add to a plain JSON request. */
export interface StepOptions {
  headers?: Record<string, string>;
  /** A body sent as is, with this content type (CSV uploads, bodies that are not JSON). */
  raw?: {type: string; data: string | Uint8Array};
  /**
   * The answer is the bare id of a new org, workspace or document (known without it for POSTs to
   * `/api/orgs`, `/api/orgs/{org}/workspaces`, `/api/workspaces/{ws}/docs` and `/api/docs`).
   */
  made?: 'org' | 'ws' | 'doc';
}

/** A difference found on replay, with the step it belongs to. */
export interface StepDifference extends Difference {
  step: string;
}

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

export class Session {
  readonly normaliser: Normaliser;
  /** Record mode: the steps so far. */
  readonly recorded: RecordedStep[] = [];
  /** Replay mode: differences not listed (or listed at a looser level than they differ). */
  readonly unexpected: StepDifference[] = [];
  /** Replay mode: listed steps that answered exactly as Grist did (the listing is stale). */
  readonly stale: string[] = [];
  private readonly golden?: Map<string, RecordedStep>;
  private readonly seen = new Set<string>();

  constructor(
    readonly scenario: string,
    readonly mode: 'record' | 'replay',
    private readonly client: Client,
    readonly users: Record<Exclude<Who, 'anon'>, SessionUser>,
    golden?: Golden,
    private readonly differences: Record<string, ListedDifference> = {},
    private readonly pathDifferences: readonly PathDifference[] = [],
  ) {
    const keys: Record<string, string> = {};
    for (const [who, u] of Object.entries(users)) keys[u.key] = who;
    this.normaliser = new Normaliser(keys);
    if (golden) this.golden = new Map(golden.steps.map((s) => [s.step, s]));
  }

  /** Makes one request, then records its answer or compares it with the recorded one. */
  async call(step: string, who: Who, method: string, path: string, body?: unknown, opts: StepOptions = {}) {
    if (this.seen.has(step)) throw new Error(`${this.scenario}: step "${step}" is named twice`);
    this.seen.add(step);
    const headers = {...(opts.headers ?? {})};
    const key = who === 'anon' ? undefined : this.users[who].key;
    const res = opts.raw
      ? await this.client.call(method, path, {
          key,
          headers: {'content-type': opts.raw.type, ...headers},
          body: opts.raw.data,
        })
      : await this.client.call(method, path, {key, headers, ...(body === undefined ? {} : {json: body})});
    const n = this.normaliser;
    const request: RecordedStep['request'] = {user: who, method, path: n.path(path)};
    if (body !== undefined) request.body = n.body(body);
    else if (opts.raw) request.body = typeof opts.raw.data === 'string' ? n.text(opts.raw.data) : '(bytes)';
    const answer: Answer = {
      status: res.status,
      headers: normaliseHeaders(res.headers, n),
      body: await answerBody(res, n, opts.made ?? answeredId(method, path)),
    };
    if (this.mode === 'record') this.recorded.push({step, request, answer});
    else this.compare(step, request, answer);
    return res;
  }

  get(step: string, who: Who, path: string, opts?: StepOptions) {
    return this.call(step, who, 'GET', path, undefined, opts);
  }
  post(step: string, who: Who, path: string, body?: unknown, opts?: StepOptions) {
    return this.call(step, who, 'POST', path, body, opts);
  }
  patch(step: string, who: Who, path: string, body?: unknown, opts?: StepOptions) {
    return this.call(step, who, 'PATCH', path, body, opts);
  }
  put(step: string, who: Who, path: string, body?: unknown, opts?: StepOptions) {
    return this.call(step, who, 'PUT', path, body, opts);
  }
  del(step: string, who: Who, path: string, opts?: StepOptions) {
    return this.call(step, who, 'DELETE', path, undefined, opts);
  }

  /**
   * A value seen other than as an answer (a webhook delivery a local receiver got), kept or
   * compared like an answer's body.
   */
  observe(step: string, value: unknown): void {
    if (this.seen.has(step)) throw new Error(`${this.scenario}: step "${step}" is named twice`);
    this.seen.add(step);
    const request: RecordedStep['request'] = {user: 'anon', method: 'OBSERVE', path: step};
    const answer: Answer = {status: 0, headers: {}, body: this.normaliser.body(value)};
    if (this.mode === 'record') this.recorded.push({step, request, answer});
    else this.compare(step, request, answer);
  }

  /** Replay mode: golden steps this run never made (the scenario changed since it was recorded). */
  missing(): string[] {
    return this.golden ? [...this.golden.keys()].filter((s) => !this.seen.has(s)) : [];
  }

  private compare(step: string, request: RecordedStep['request'], answer: Answer): void {
    const golden = this.golden?.get(step);
    if (!golden) {
      this.unexpected.push({step, path: '(step)', grist: '(not recorded: record again)', gristlite: request});
      return;
    }
    for (const d of diffValues(golden.request, request, 'request')) {
      this.unexpected.push({step, ...d, path: `${d.path} (record again)`});
    }
    const listed = this.differences[`${this.scenario}/${step}`];
    if (listed?.level === 'skip') return;
    const allowed = (d: Difference) => this.pathDifferences.some((p) => p.path.test(d.path));
    const exact = compareAnswers(golden.answer, answer).filter((d) => !allowed(d));
    if (listed && exact.length === 0) this.stale.push(`${this.scenario}/${step}`);
    const diffs = listed ? compareAnswers(golden.answer, answer, listed.level).filter((d) => !allowed(d)) : exact;
    for (const d of diffs) this.unexpected.push({step, ...d});
  }
}

/**
 * What a bare id answered by a request is the id of: what a POST made, or the org or workspace a
 * PATCH or DELETE changed.
 */
function answeredId(method: string, path: string): 'org' | 'ws' | 'doc' | undefined {
  const p = path.split('?')[0];
  if (method === 'POST') {
    if (/^\/api\/orgs\/?$/.test(p)) return 'org';
    if (/^\/api\/orgs\/[^/]+\/workspaces\/?$/.test(p)) return 'ws';
    if (/^\/api\/(workspaces\/[^/]+\/docs|docs)\/?$/.test(p)) return 'doc';
  } else if (method === 'PATCH' || method === 'DELETE') {
    if (/^\/api\/orgs\/[^/]+\/?$/.test(p)) return 'org';
    if (/^\/api\/workspaces\/[^/]+\/?$/.test(p)) return 'ws';
  }
  return undefined;
}

/** The body as compared: JSON parsed, text, a workbook's cell values, or a digest of other bytes. */
async function answerBody(res: ApiResponse, n: Normaliser, made?: 'org' | 'ws' | 'doc'): Promise<unknown> {
  const type = res.headers['content-type'] ?? '';
  if (type.includes('json')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(res.text);
    } catch {
      return {notJson: n.text(res.text)};
    }
    return n.body(parsed, res.status < 300 ? made : undefined);
  }
  if (type.startsWith(XLSX_TYPE) && res.status === 200) return {xlsx: await workbookCells(res.raw)};
  if (/^text\/|csv|xml|javascript/.test(type) || res.raw.length === 0) return n.text(res.text);
  if (res.raw.subarray(0, 4).toString('latin1') === 'PK\u0003\u0004') return {zip: zipEntries(res.raw)};
  if (res.raw.subarray(0, 16).toString('latin1') === 'SQLite format 3\u0000') return {sqlite: sqliteTables(res.raw)};
  if (res.raw.length <= 2048 && !res.raw.includes(0)) return n.text(res.text);
  return {bytes: res.raw.length, sha256: createHash('sha256').update(res.raw).digest('base64')};
}

/**
 * A zip's entries from its central directory: name, size and CRC-32 (its bytes hold file times,
 * which differ on every download).
 */
function zipEntries(raw: Buffer): {name: string; size: number; crc32: number}[] {
  const end = raw.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) return [];
  const count = raw.readUInt16LE(end + 10);
  let p = raw.readUInt32LE(end + 16);
  const out: {name: string; size: number; crc32: number}[] = [];
  for (let i = 0; i < count && raw.readUInt32LE(p) === 0x02014b50; i++) {
    const nameLen = raw.readUInt16LE(p + 28);
    const extra = raw.readUInt16LE(p + 30) + raw.readUInt16LE(p + 32);
    out.push({
      name: raw.toString('utf8', p + 46, p + 46 + nameLen),
      size: raw.readUInt32LE(p + 24),
      crc32: raw.readUInt32LE(p + 16),
    });
    p += 46 + nameLen + extra;
  }
  return out;
}

/** A downloaded document: its user tables (the file's bytes differ by every write's time). */
function sqliteTables(raw: Buffer): unknown {
  const dir = mkdtempSync(join(tmpdir(), 'gl-rec-'));
  try {
    writeFileSync(join(dir, 'doc.grist'), raw);
    const db = new Database(join(dir, 'doc.grist'), {readonly: true});
    try {
      return db.prepare('SELECT tableId FROM _grist_Tables ORDER BY id').pluck().all();
    } finally {
      db.close();
    }
  } catch (e) {
    return `(not a Grist document: ${(e as Error).message})`;
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
}

/** Each sheet's name and its rows of cell values (what a reader of the file sees). */
async function workbookCells(raw: Buffer): Promise<unknown> {
  const {default: ExcelJS} = await import('exceljs');
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(raw as unknown as ArrayBuffer);
  return wb.worksheets.map((ws) => {
    const rows: unknown[][] = [];
    ws.eachRow({includeEmpty: true}, (row) => {
      const vals = (row.values as unknown[]).slice(1).map((v) => (v instanceof Date ? v.toISOString() : (v ?? null)));
      rows.push(vals);
    });
    return {name: ws.name, rows};
  });
}
