// Issue 16: the HTML API reference is generated from the types (typedoc, `pnpm docs:api`), and
// every exported class, interface, type and constant of @gristlite/core has a doc comment:
// typedoc.json treats a missing one (or a public type referencing an unexported one) as an error.
import {spawnSync} from 'node:child_process';
import {join} from 'node:path';
import {fileURLToPath} from 'node:url';
import {test} from 'uvu';
import * as assert from 'uvu/assert';

const CORE = fileURLToPath(new URL('../..', import.meta.url));

test('typedoc documents every export of @gristlite/core without a warning', () => {
  const bin = join(CORE, 'node_modules', 'typedoc', 'bin', 'typedoc');
  const r = spawnSync(process.execPath, [bin, '--emit', 'none'], {
    cwd: CORE,
    encoding: 'utf8',
    env: {...process.env, NO_COLOR: '1', FORCE_COLOR: '0'},
  });
  const out = `${r.stdout}\n${r.stderr}`;
  assert.is(r.status, 0, out);
  assert.not.match(out, /\[warning\]/, out);
});

test.run();
