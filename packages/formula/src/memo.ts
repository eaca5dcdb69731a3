/**
 * A Map that keeps at most `max` entries, dropping the oldest first: the memo of a pure function
 * whose keys come from documents or requests (time zones, formats, type strings), so that no
 * input can grow it without bound. Memos like this are the only module-level mutable values core
 * keeps (test/module-state.test.ts checks that).
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly max: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= this.max) {
      const oldest = this.keys().next();
      if (!oldest.done) this.delete(oldest.value);
    }
    return super.set(key, value);
  }
}
