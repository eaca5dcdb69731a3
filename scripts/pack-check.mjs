// Packs @gristlite/core into a tarball, installs it into a scratch project in a temporary directory
// (from the pnpm store when it can, the registry otherwise) and runs the embedding example there,
// importing '@gristlite/core' as any other project would. Run after `pnpm build`.
// Exit 0 and the example's output when all works; PACK_CHECK_KEEP=1 keeps the scratch project.
import {execFileSync} from 'node:child_process';
import {mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const core = join(root, 'packages', 'core');
const scratch = mkdtempSync(join(tmpdir(), 'gristlite-pack-'));
const run = (cmd, args, cwd) => execFileSync(cmd, args, {cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']});
try {
  run('pnpm', ['pack', '--pack-destination', scratch], core);
  const tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error('pnpm pack made no tarball');
  writeFileSync(
    join(scratch, 'package.json'),
    JSON.stringify(
      {
        name: 'scratch-embedder',
        private: true,
        type: 'module',
        dependencies: {'@gristlite/core': `file:./${tarball}`},
        pnpm: {onlyBuiltDependencies: ['better-sqlite3']},
      },
      null,
      2,
    ),
  );
  run('pnpm', ['install', '--prefer-offline', '--ignore-workspace', '--reporter', 'silent'], scratch);
  // The compiled example, importing the package instead of the workspace's sources.
  const example = readFileSync(join(core, 'dist', 'examples', 'embed.js'), 'utf8').replace(
    /from '\.\.\/src\/index\.js'/g,
    "from '@gristlite/core'",
  );
  if (!example.includes("from '@gristlite/core'")) throw new Error('embed.js no longer imports ../src/index.js');
  writeFileSync(join(scratch, 'embed.js'), example);
  const out = run(process.execPath, ['embed.js'], scratch);
  process.stdout.write(out);
  console.log(`pack-check: ${tarball} installed into a scratch project; the embedding example ran`);
} finally {
  if (process.env.PACK_CHECK_KEEP) console.log(`scratch project kept: ${scratch}`);
  else rmSync(scratch, {recursive: true, force: true});
}
