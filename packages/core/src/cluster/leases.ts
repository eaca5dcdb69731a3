/**
 * Document leases: with several gristlite processes on one data directory, a process reads and
 * writes a document only while it holds the document's lease; requests for a document leased by
 * another process are forwarded to it. One process alone needs no leases.
 */
export interface DocLeases {
  /** Takes the lease on a doc; true when this process holds it (already or now), false when another does. */
  acquire(docId: string): Promise<boolean>;
  /** Gives the lease up; a no-op when this process does not hold it. */
  release(docId: string): Promise<void>;
  /** How to reach the process holding the lease (its URL), or null when nobody holds it. */
  holder?(docId: string): Promise<string | null>;
  /** Releases every lease and stops renewing. */
  close?(): Promise<void>;
}
