import type {HomeAccess} from './access.js';
import type {Authenticator, SpecialUsers} from './authn.js';
import type {OrgSettings} from './settings.js';
import type {HomeShapes} from './shapes.js';
import type {HomeStore} from './types.js';

/** What the home operations (orgs.ts, workspaces.ts, docs.ts, acl.ts, users.ts) work with. */
export interface HomeParts {
  store: HomeStore;
  special: SpecialUsers;
  auth: Authenticator;
  access: HomeAccess;
  shapes: HomeShapes;
  settings: OrgSettings;
}
