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
    const k = `${owner}\u0000${key}`;
    const hit = this.entries.get(k);
    if (hit) {
      this.remove(k);
      if (hit.stamp === stamp) {
        this.entries.set(k, hit); // Most recently used last.
        this.bytes += hit.json.length * 2;
        return hit.json;
      }
    }
    const json = compute();
    if (json.length * 2 <= this.maxBytes / 2) {
      this.entries.set(k, {stamp, json});
      this.bytes += json.length * 2;
      for (const old of this.entries.keys()) {
        if (this.bytes <= this.maxBytes) {
          break;
        }
        this.remove(old);
      }
    }
    return json;
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
