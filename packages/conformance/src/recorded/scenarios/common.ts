/**
 * What scenarios share: a fresh team site, workspace and document for one scenario, made through
 * the API as any client would (so that making them is recorded and compared too).
 */
import type {Session} from '../session.js';

/** A scenario: a name (its golden file's) and the steps it runs. */
export interface Scenario {
  name: string;
  run(s: Session): Promise<void>;
}

/** What `site` makes: a team site of chimpy's, a workspace in it and a document in that. */
export interface Site {
  org: number;
  domain: string;
  ws: number;
  doc: string;
}

/**
 * A team site `domain` owned by chimpy with a workspace and an empty document. Its steps are named
 * `site: ...`; the ids come from the server's own answers.
 */
export async function site(s: Session, domain: string, docName = 'Doc'): Promise<Site> {
  const org = (await s.post('site: new org', 'chimpy', '/api/orgs', {name: domain, domain}, {made: 'org'})).body;
  const ws = (
    await s.post('site: new workspace', 'chimpy', `/api/orgs/${org}/workspaces`, {name: 'Work'}, {made: 'ws'})
  ).body;
  const doc = await newDoc(s, 'site: new doc', ws, docName);
  return {org, domain, ws, doc};
}

/** A new document in a workspace, as chimpy. */
export async function newDoc(s: Session, step: string, ws: number, name: string): Promise<string> {
  return (await s.post(step, 'chimpy', `/api/workspaces/${ws}/docs`, {name}, {made: 'doc'})).body;
}

/** Shares a resource (`/api/orgs/1`, `/api/docs/x`) with users by email, as chimpy. */
export async function share(s: Session, step: string, path: string, users: Record<string, string | null>) {
  return s.patch(step, 'chimpy', `${path}/access`, {delta: {users}});
}

/** `/api/docs/{doc}/tables/{table}`. */
export function tpath(doc: string, table = 'Table1'): string {
  return `/api/docs/${doc}/tables/${table}`;
}
