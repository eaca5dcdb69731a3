/**
 * The JSON of recent record reads, so that the same read of unchanged data is answered without
 * running it again (pollers, dashboards, pages of the same sorted view). An answer is kept with the
 * document's data stamp (colstats.ts) and served only while the stamp is unchanged, so any write,
 * by this engine, by other code on the same connection, or by another connection, retires it.
 * One LRU for an engine's open documents, bounded in bytes (strings count two bytes a character).
 */
export class ReadCache {
  private readonly entries = new Map<string, {stamp: string; json: string}>();
  private bytes = 0;
  private owners = 0;

  constructor(private readonly maxBytes: number) {}

  /** A key for one open document's answers (a document reopened gets a new one). */
  newOwner(): string {
    return String(++this.owners);
  }

  /** The cached answer of `owner` to `key` at `stamp`, or `compute()`'s, kept if small enough. */
  get(owner: string, stamp: string, key: string, compute: () => string): string {
    const hit = this.peek(owner, stamp, key);
    if (hit !== undefined) return hit;
    const json = compute();
    this.put(owner, stamp, key, json);
    return json;
  }

  /** The cached answer of `owner` to `key` at `stamp`, if there is one. */
  peek(owner: string, stamp: string, key: string): string | undefined {
    const k = `${owner}\u0000${key}`;
    const hit = this.entries.get(k);
    if (!hit) return undefined;
    this.remove(k);
    if (hit.stamp !== stamp) return undefined;
    this.entries.set(k, hit); // Most recently used last.
    this.bytes += hit.json.length * 2;
    return hit.json;
  }

  /** The most characters one answer may have to be kept (half the cache). */
  get maxChars(): number {
    return this.maxBytes / 4;
  }

  /**
   * Keeps `json` as `owner`'s answer to `key` at `stamp` when it is small enough, dropping the
   * least recently used answers beyond the bound.
   */
  put(owner: string, stamp: string, key: string, json: string): void {
    if (json.length > this.maxChars) return;
    const k = `${owner}\u0000${key}`;
    this.remove(k);
    this.entries.set(k, {stamp, json});
    this.bytes += json.length * 2;
    for (const old of this.entries.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.remove(old);
    }
  }

  /** Drops every answer of `owner` (a document being closed). */
  forget(owner: string): void {
    for (const k of [...this.entries.keys()]) {
      if (k.startsWith(`${owner}\u0000`)) {
        this.remove(k);
      }
    }
  }

  get size(): number {
    return this.entries.size;
  }

  private remove(k: string): void {
    const e = this.entries.get(k);
    if (e) {
      this.bytes -= e.json.length * 2;
      this.entries.delete(k);
    }
  }
}
