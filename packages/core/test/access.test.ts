// Table-driven tests of the one access decision (SPEC §2): role x action, and inheritance org ->
// workspace -> doc capped by maxInheritedRole, with guests and members never inherited.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {
  can,
  directRole,
  effectiveRoles,
  inheritable,
  isRoleAtLeast,
  strongest,
  weakest,
  type Action,
  type ResourceAcl,
} from '../src/access/index.js';
import type {AclEntry, BasicRole, ResourceKind, Role} from '../src/home/types.js';

const ROLES: (Role | null)[] = ['owners', 'editors', 'viewers', 'members', 'guests', null];
const ACTIONS: Action[] = ['view', 'update', 'add', 'remove', 'schemaEdit', 'aclEdit'];
const CAPS: (BasicRole | null)[] = ['owners', 'editors', 'viewers', null];

// SPEC §2.1: the permission bits of each role.
const BITS: Record<string, Action[]> = {
  owners: ['view', 'update', 'add', 'remove', 'schemaEdit', 'aclEdit'],
  editors: ['view', 'update', 'add', 'remove'],
  viewers: ['view'],
  members: ['view'],
  guests: ['view'],
  null: [],
};

test('can(role, action) for every role and action', () => {
  for (const role of ROLES) {
    for (const action of ACTIONS) {
      assert.is(can(role, action), BITS[String(role)].includes(action), `${role} ${action}`);
    }
  }
});

test('strength order owners > editors > viewers > members > guests > null', () => {
  for (let i = 0; i < ROLES.length; i++) {
    for (let j = 0; j < ROLES.length; j++) {
      const [a, b] = [ROLES[i], ROLES[j]];
      assert.is(strongest(a, b), i <= j ? a : b, `strongest(${a}, ${b})`);
      assert.is(weakest(a, b), a === null || b === null ? null : i <= j ? b : a, `weakest(${a}, ${b})`);
      if (b !== null) assert.is(isRoleAtLeast(a, b), a !== null && i <= j, `isRoleAtLeast(${a}, ${b})`);
    }
  }
});

test('only owners, editors and viewers are inheritable', () => {
  assert.equal(ROLES.map(inheritable), ['owners', 'editors', 'viewers', null, null, null]);
});

const USER = 7;
const OTHER = 8;
const EVERYONE = 9;

function acl(kind: ResourceKind, id: string, roles: Record<number, Role | null>): AclEntry[] {
  return Object.entries(roles)
    .filter(([, role]) => role !== null)
    .map(([userId, role]) => ({kind, resourceId: id, userId: Number(userId), role: role as Role}));
}

interface Level {
  direct?: Role | null;
  max?: BasicRole | null;
  inner?: boolean;
  /** Role held by everyone@ here. */
  everyone?: Role | null;
}

/** The level's cap; an explicit null cuts inheritance, a missing one is the default (owners). */
function capOf(level: Level): BasicRole | null {
  return level.max === undefined ? 'owners' : level.max;
}

function chainOf(org: Level, ws?: Level, doc?: Level): ResourceAcl[] {
  const chain: ResourceAcl[] = [
    {
      acl: acl('org', '1', {[USER]: org.direct ?? null, [OTHER]: 'owners', [EVERYONE]: org.everyone ?? null}),
      hasInnerShare: org.inner,
    },
  ];
  if (ws)
    chain.push({
      acl: acl('ws', '2', {[USER]: ws.direct ?? null, [EVERYONE]: ws.everyone ?? null}),
      maxInheritedRole: capOf(ws),
      hasInnerShare: ws.inner,
    });
  if (doc)
    chain.push({
      acl: acl('doc', 'd', {[USER]: doc.direct ?? null, [EVERYONE]: doc.everyone ?? null}),
      maxInheritedRole: capOf(doc),
    });
  return chain;
}

test('inheritance with maxInheritedRole caps: every org role x ws cap x doc cap', () => {
  const rank = (r: Role | null) => (r === null ? 0 : ROLES.length - ROLES.indexOf(r));
  const min = (a: Role | null, b: Role | null) => (rank(a) <= rank(b) ? a : b);
  for (const orgRole of ['owners', 'editors', 'viewers', 'members', null] as (Role | null)[]) {
    for (const wsMax of CAPS) {
      for (const docMax of CAPS) {
        const {roles, parent} = effectiveRoles(chainOf({direct: orgRole}, {max: wsMax}, {max: docMax}), [USER]);
        const ws = min(inheritable(orgRole), wsMax);
        const doc = min(ws, docMax);
        const label = `org=${orgRole} wsMax=${wsMax} docMax=${docMax}`;
        assert.equal(roles, [orgRole, ws, doc], label);
        assert.is(parent, ws, `${label}: parent is the workspace's inheritable role`);
      }
    }
  }
});

interface Case {
  name: string;
  org: Level;
  ws?: Level;
  doc?: Level;
  ids?: number[];
  roles: (Role | null)[];
  parent?: BasicRole | null;
}

const CASES: Case[] = [
  {name: 'no role anywhere', org: {}, ws: {}, doc: {}, roles: [null, null, null], parent: null},
  {
    name: 'org owner inherits everywhere',
    org: {direct: 'owners'},
    ws: {},
    doc: {},
    roles: ['owners', 'owners', 'owners'],
    parent: 'owners',
  },
  {
    name: 'direct ws role without org role',
    org: {},
    ws: {direct: 'editors'},
    doc: {},
    roles: [null, 'editors', 'editors'],
  },
  {
    name: 'direct doc role only',
    org: {},
    ws: {},
    doc: {direct: 'viewers'},
    roles: [null, null, 'viewers'],
    parent: null,
  },
  {
    name: 'guest of org and ws through an inner share',
    org: {inner: true},
    ws: {inner: true},
    doc: {direct: 'viewers'},
    roles: ['guests', 'guests', 'viewers'],
    parent: null,
  },
  {
    name: 'guests are not inherited',
    org: {inner: true},
    ws: {inner: true},
    doc: {},
    roles: ['guests', 'guests', null],
    parent: null,
  },
  {
    name: 'members are not inherited',
    org: {direct: 'members'},
    ws: {},
    doc: {},
    roles: ['members', null, null],
    parent: null,
  },
  {
    name: 'member with a direct ws role',
    org: {direct: 'members'},
    ws: {direct: 'editors'},
    doc: {},
    roles: ['members', 'editors', 'editors'],
  },
  {
    name: 'direct role beats a weaker inherited one',
    org: {direct: 'viewers'},
    ws: {direct: 'owners'},
    doc: {},
    roles: ['viewers', 'owners', 'owners'],
  },
  {
    name: 'inherited role beats a weaker direct one',
    org: {direct: 'owners'},
    ws: {direct: 'viewers'},
    doc: {direct: 'viewers'},
    roles: ['owners', 'owners', 'owners'],
  },
  {
    name: 'ws cap null cuts the org role; direct doc role stays',
    org: {direct: 'owners'},
    ws: {max: null},
    doc: {direct: 'editors'},
    roles: ['owners', null, 'editors'],
    parent: null,
  },
  {
    name: 'ws cap viewers: direct ws editor keeps editors',
    org: {direct: 'owners'},
    ws: {max: 'viewers', direct: 'editors'},
    doc: {},
    roles: ['owners', 'editors', 'editors'],
  },
  {
    name: 'doc cap viewers on an org owner',
    org: {direct: 'owners'},
    ws: {},
    doc: {max: 'viewers'},
    roles: ['owners', 'owners', 'viewers'],
    parent: 'owners',
  },
  {
    name: 'doc cap null, no direct role',
    org: {direct: 'editors'},
    ws: {},
    doc: {max: null},
    roles: ['editors', 'editors', null],
  },
  {
    name: 'doc cap does not limit a direct doc role',
    org: {},
    ws: {},
    doc: {max: null, direct: 'owners'},
    roles: [null, null, 'owners'],
  },
  {
    name: 'everyone@ on the doc counts for whoever it applies to',
    org: {},
    ws: {},
    doc: {everyone: 'viewers'},
    ids: [USER, EVERYONE],
    roles: [null, null, 'viewers'],
  },
  {
    name: 'everyone@ on the ws is inherited by its docs',
    org: {},
    ws: {everyone: 'editors'},
    doc: {},
    ids: [USER, EVERYONE],
    roles: [null, 'editors', 'editors'],
  },
  {
    name: 'everyone@ does not apply unless its id is given',
    org: {},
    ws: {everyone: 'editors'},
    doc: {},
    roles: [null, null, null],
  },
  {
    name: 'strongest of the user and everyone@',
    org: {direct: 'viewers'},
    ws: {everyone: 'editors'},
    doc: {},
    ids: [USER, EVERYONE],
    roles: ['viewers', 'editors', 'editors'],
  },
];

for (const c of CASES) {
  test(`effectiveRoles: ${c.name}`, () => {
    const {roles, parent} = effectiveRoles(chainOf(c.org, c.ws, c.doc), c.ids ?? [USER]);
    assert.equal(roles, c.roles);
    if (c.parent !== undefined) assert.is(parent, c.parent);
  });
}

test('effectiveRoles on shorter chains', () => {
  assert.equal(effectiveRoles(chainOf({direct: 'editors'}), [USER]), {roles: ['editors'], parent: null});
  assert.equal(effectiveRoles(chainOf({direct: 'editors'}, {max: 'viewers'}), [USER]), {
    roles: ['editors', 'viewers'],
    parent: 'editors',
  });
  assert.equal(effectiveRoles([], [USER]), {roles: [], parent: null});
});

test('role x action x resource: what each org role may do at each level', () => {
  // With full inheritance, an org role decides the actions on the org, its workspaces and docs.
  const expected: Record<string, [Action[], Action[], Action[]]> = {
    owners: [BITS.owners, BITS.owners, BITS.owners],
    editors: [BITS.editors, BITS.editors, BITS.editors],
    viewers: [['view'], ['view'], ['view']],
    members: [['view'], [], []],
    null: [[], [], []],
  };
  for (const [orgRole, perLevel] of Object.entries(expected)) {
    const role = orgRole === 'null' ? null : (orgRole as Role);
    const {roles} = effectiveRoles(chainOf({direct: role}, {}, {}), [USER]);
    (['org', 'ws', 'doc'] as const).forEach((level, i) => {
      for (const action of ACTIONS) {
        assert.is(can(roles[i], action), perLevel[i].includes(action), `${orgRole} ${action} on ${level}`);
      }
    });
  }
});

test('directRole picks the strongest entry among the given users', () => {
  const entries = acl('doc', 'd', {[USER]: 'viewers', [EVERYONE]: 'editors', [OTHER]: 'owners'});
  assert.is(directRole(entries, [USER]), 'viewers');
  assert.is(directRole(entries, [USER, EVERYONE]), 'editors');
  assert.is(directRole(entries, []), null);
  assert.is(directRole([], [USER]), null);
});

test.run();
