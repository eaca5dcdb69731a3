/**
 * Checks a document's action history the way Grist would find it: each body decodes and re-encodes
 * to the same bytes, each stored `actionHash` is the hash of its body and its parent's hash, and each
 * `parentRef` names the action whose hash the body gives as its parent (a pruned parent is allowed:
 * Grist prunes from the start of history and leaves the link dangling).
 */
import type Database from 'better-sqlite3';
import {type ActionBundle, computeActionHash, decodeBundle, encodeBundle} from './format.js';

/** One problem found in a history. */
export interface ChainProblem {
  /** The `_gristsys_ActionHistory` row id. */
  id: number;
  actionNum: number;
  problem: string;
}

/** What `checkActionHistory` found. */
export interface ChainReport {
  /** Rows read. */
  actions: number;
  /** Rows whose body decoded, re-encoded to the same bytes, and whose hash recomputed. */
  verified: number;
  problems: ChainProblem[];
}

interface Row {
  id: number;
  actionNum: number;
  actionHash: string | null;
  parentRef: number | null;
  body: Buffer;
}

/** Reads every stored action of `db` and checks body, hash and link (see the module comment). */
export function checkActionHistory(db: Database.Database): ChainReport {
  const rows = db
    .prepare('SELECT id, actionNum, actionHash, parentRef, body FROM _gristsys_ActionHistory ORDER BY id')
    .all() as Row[];
  const hashById = new Map(rows.map((r) => [r.id, r.actionHash]));
  const problems: ChainProblem[] = [];
  let verified = 0;
  for (const r of rows) {
    const bad = (problem: string) => problems.push({id: r.id, actionNum: r.actionNum, problem});
    let bundle: ActionBundle;
    try {
      bundle = decodeBundle(r.body);
    } catch (e) {
      bad((e as Error).message);
      continue;
    }
    let ok = true;
    // Grist's encodeAction runs after the hash is set, so the body holds its own hash.
    const again = (() => {
      try {
        return computeActionHash({...bundle, actionNum: r.actionNum});
      } catch (e) {
        return `unhashable: ${(e as Error).message}`;
      }
    })();
    if (again !== r.actionHash) {
      bad(`hash ${again} differs from the stored ${r.actionHash}`);
      ok = false;
    }
    const reencoded = (() => {
      try {
        return Buffer.compare(encodeBundle(bundle), r.body) === 0;
      } catch {
        return false;
      }
    })();
    if (!reencoded) {
      bad('body does not re-encode to the same bytes');
      ok = false;
    }
    if (r.parentRef !== null && hashById.has(r.parentRef) && hashById.get(r.parentRef) !== bundle.parentActionHash) {
      bad(`parentRef ${r.parentRef} is not the parent the body names`);
      ok = false;
    }
    if (ok) verified++;
  }
  return {actions: rows.length, verified, problems};
}
