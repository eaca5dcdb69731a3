// Issue 16, embedders: a LICENSE and a license field everywhere, one range per dependency across the
// workspace, no uvu in core's runtime dependencies, and (under CI=1 or GRISTLITE_PACK_CHECK=1, as it
// installs packages and takes a minute) the packed core installed into a scratch project running
// the embedding example (scripts/pack-check.mjs).
import {execFileSync} from 'node:child_process';
import {existsSync, readFileSync, readdirSync} from 'node:fs';
import {join} from 'node:path';
import {fileURLToPath} from 'node:url';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {underCi} from '../src/testing/fixtures.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const manifests = [
  'package.json',
  'bench/package.json',
  ...['packages', 'adapters'].flatMap((g) => readdirSync(join(root, g)).map((n) => `${g}/${n}/package.json`)),
]
  .filter((p) => existsSync(join(root, p)))
  .map((p) => ({path: p, json: JSON.parse(readFileSync(join(root, p), 'utf8'))}));

test('LICENSE (Apache-2.0) at the root and in every published package; every package.json says so', () => {
  assert.match(readFileSync(join(root, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0/);
  for (const {path, json} of manifests) {
    assert.is(json.license, 'Apache-2.0', path);
    if (!json.private)
      assert.ok(existsSync(join(root, path.replace('package.json', 'LICENSE'))), `${path}: LICENSE beside it`);
  }
});

test('one range per dependency across the workspace', () => {
  const ranges = new Map<string, Set<string>>();
  for (const {json} of manifests) {
    for (const sec of ['dependencies', 'devDependencies']) {
      for (const [name, range] of Object.entries((json[sec] ?? {}) as Record<string, string>)) {
        if (!ranges.has(name)) ranges.set(name, new Set());
        ranges.get(name)!.add(range);
      }
    }
  }
  const differing = [...ranges].filter(([, r]) => r.size > 1).map(([n, r]) => `${n}: ${[...r].join(' / ')}`);
  assert.equal(differing, []);
});

test('@gristlite/core ships no test runner: uvu is neither a dependency nor a peer, and no file of dist/src imports it', () => {
  const core = manifests.find((m) => m.path === 'packages/core/package.json')!.json;
  assert.not.ok('uvu' in (core.dependencies ?? {}));
  assert.not.ok('uvu' in (core.peerDependencies ?? {}));
  const dist = join(root, 'packages', 'core', 'dist', 'src');
  const users = (readdirSync(dist, {recursive: true}) as string[]).filter(
    (f) => f.endsWith('.js') && /from ['"]uvu/.test(readFileSync(join(dist, f), 'utf8')),
  );
  assert.equal(users, []);
});

test('the packed core installs into a scratch project and runs the embedding example', () => {
  if (!underCi() && !process.env.GRISTLITE_PACK_CHECK) {
    console.log(
      'SKIPPED pack check (set GRISTLITE_PACK_CHECK=1, or CI=1, to install the packed core into a scratch project)',
    );
    return;
  }
  const out = execFileSync(process.execPath, [join(root, 'scripts', 'pack-check.mjs')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  assert.match(out.replace(/\x1b\[\d+m/g, ''), /added rows \[ 1, 2, 3 \]/);
  assert.match(out, /pack-check: gristlite-core-\d+\.\d+\.\d+\.tgz installed/);
});

test.run();
