// Every export of @gristlite/formula has a doc comment: typedoc.json treats a missing one (or a
// public type referencing an unexported one not listed as intentionally so) as an error, as
// @gristlite/core's reference does.
import {spawnSync} from 'node:child_process';
import {join} from 'node:path';
import {fileURLToPath} from 'node:url';
import {test} from 'uvu';
import * as assert from 'uvu/assert';

const PKG = fileURLToPath(new URL('../..', import.meta.url));

test('typedoc documents every export of @gristlite/formula without a warning', () => {
  const bin = join(PKG, 'node_modules', 'typedoc', 'bin', 'typedoc');
  const r = spawnSync(process.execPath, [bin, '--emit', 'none'], {
    cwd: PKG,
    encoding: 'utf8',
    env: {...process.env, NO_COLOR: '1', FORCE_COLOR: '0'},
  });
  const out = `${r.stdout}\n${r.stderr}`;
  assert.is(r.status, 0, out);
  assert.not.match(out, /\[warning\]/, out);
});

test.run();
