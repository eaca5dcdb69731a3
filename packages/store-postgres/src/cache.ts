/**
 * A per-process cache of the home store's answers that every request asks again: the user of an
 * API key, a document, its workspace and org, and the access lists of each (D177).
 *
 * Grist keeps a document's access for a user 5 s (`DOC_AUTH_CACHE_TTL` in HomeDBManager) and
 * drops it when the access changes, on other servers through its pub/sub. Here any change to the
 * home (every write of `PostgresHomeStore` to a table whose rows are cached) drops the whole cache:
 * at once in the process that made it, and in every other process through PostgreSQL's
 * LISTEN/NOTIFY (`HOME_CHANNEL`), delivered when the change commits. The time-to-live bounds what
 * a lost notification could leave behind; while the listening connection is down nothing is
 * cached.
 */

/** Bounds of the cache (`GRISTLITE_HOME_CACHE_MSEC`, `GRISTLITE_HOME_CACHE_ENTRIES`). */
export interface HomeCacheOptions {
  /** How long an answer is used, counted from when its query was sent; 0 turns the cache off. */
  ttlMs: number;
  /** Answers kept at most; the oldest go first. */
  maxEntries: number;
}

/** Grist's `DOC_AUTH_CACHE_TTL`. */
export const DEFAULT_HOME_CACHE_MS = 5000;
export const DEFAULT_HOME_CACHE_ENTRIES = 10_000;

/** The NOTIFY channel of home changes; the payload is the schema that changed. */
export const HOME_CHANNEL = 'gristlite_home';

export class HomeReadCache {
  /** In insertion order, which is expiry order: the first entry is the next to expire. */
  private readonly entries = new Map<string, {value: unknown; until: number}>();
  /** Bumped by every invalidation: an answer whose query was sent before one is not kept. */
  private generation = 0;
  /** Whether changes elsewhere reach this process (its LISTEN connection is up). */
  private listening = false;
  hits = 0;
  misses = 0;

  constructor(readonly opts: HomeCacheOptions) {
    if (!(opts.ttlMs >= 0) || !(opts.maxEntries >= 1)) throw new Error('home cache: ttlMs >= 0 and maxEntries >= 1');
  }

  get active(): boolean {
    return this.listening && this.opts.ttlMs > 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Turns caching on (a LISTEN connection is up) or off (it is down); either way what is kept goes. */
  setListening(on: boolean): void {
    this.listening = on;
    this.invalidate();
  }

  /**
   * The cached answer for `key`, or `load()`'s, kept when `keep` says so (absent rows are not kept,
   * so an unknown API key costs its query every time and cannot fill the cache).
   */
  async get<T>(key: string, load: () => Promise<T>, keep: (v: T) => boolean): Promise<T> {
    if (!this.active) return load();
    const sent = performance.now();
    const hit = this.entries.get(key);
    if (hit) {
      // Copies: callers may change what they get.
      if (hit.until > sent) {
        this.hits++;
        return structuredClone(hit.value) as T;
      }
      this.entries.delete(key);
    }
    this.misses++;
    const generation = this.generation;
    const value = await load();
    if (generation === this.generation && this.active && keep(value)) {
      this.entries.delete(key);
      this.entries.set(key, {value: structuredClone(value), until: sent + this.opts.ttlMs});
      if (this.entries.size > this.opts.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    }
    return value;
  }

  /** Forgets every answer, and any answer whose query is under way. */
  invalidate(): void {
    this.generation++;
    this.entries.clear();
  }
}
