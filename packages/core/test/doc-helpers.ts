// Shared helpers of the core test suites. The real Grist documents are found by the one finder of
// `@gristlite/core/testing` (src/testing/fixtures.ts), shared by every package's tests.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {copyFixture as copyTo} from '../src/testing/fixtures.js';
import {Engine} from '../src/engine/engine.js';
import type {Principal} from '../src/home/principal.js';

export {FIXTURE_NAMES, fixturePath, needsFixtures, withFixtures} from '../src/testing/fixtures.js';

/** A fresh path in a new temporary directory. */
export function tempPath(name = 'doc.grist'): string {
  return join(mkdtempSync(join(tmpdir(), 'gl-doc-')), name);
}

/** Copies a fixture to a temporary directory (the originals are never opened for writing). */
export function copyFixture(name: string): string {
  return copyTo(name, mkdtempSync(join(tmpdir(), 'gl-doc-')));
}

/** An engine on a new data directory, with an owner and their Home workspace (`wid`). */
export interface HomeWorld {
  dir: string;
  engine: Engine;
  owner: Principal;
  wid: number;
}

/** Opens a HomeWorld before the suite's tests and closes it (removing its directory) after them. */
export function useHomeWorld(
  s: {before: (fn: () => Promise<void>) => void; after: (fn: () => Promise<void>) => void},
  prefix: string,
): HomeWorld {
  const world = {} as HomeWorld;
  s.before(async () => {
    world.dir = mkdtempSync(join(tmpdir(), prefix));
    world.engine = await Engine.open({dataDir: world.dir});
    const user = await world.engine.home.ensureUser('chimpy@getgrist.com', 'Chimpy');
    world.owner = await world.engine.home.authenticate(`Bearer ${await world.engine.home.setApiKey(user.id)}`);
    const ws = (await world.engine.home.listWorkspaces(`docs-${user.id}`, world.owner, null, false)) as Array<{
      id: number;
      name: string;
    }>;
    world.wid = ws.find((w) => w.name === 'Home')!.id;
  });
  s.after(async () => {
    await world.engine.close();
    rmSync(world.dir, {recursive: true, force: true});
  });
  return world;
}
