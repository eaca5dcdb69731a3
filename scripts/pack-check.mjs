// Packs @gristlite/formula and @gristlite/core into tarballs, installs them into a scratch project in
// a temporary directory (from the pnpm store when it can, the registry otherwise) and runs core's
// embedding example there, importing '@gristlite/core' as any other project would, after
// type-checking its TypeScript source against the installed declarations with a strict tsc (no
// skipLibCheck, as a strict consumer would); then the example of packages/formula/README.md (its
// ```js block), checking each printed line against the `// expected` comment of its console.log.
// Run after `pnpm build`.
// Exit 0 and the example's output when all works; PACK_CHECK_KEEP=1 keeps the scratch project.
import {execFileSync} from 'node:child_process';
import {mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const rootPkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const core = join(root, 'packages', 'core');
const formula = join(root, 'packages', 'formula');
const scratch = mkdtempSync(join(tmpdir(), 'gristlite-pack-'));
const run = (cmd, args, cwd) => execFileSync(cmd, args, {cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']});
try {
  run('pnpm', ['pack', '--pack-destination', scratch], formula);
  const formulaTarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'));
  if (!formulaTarball) throw new Error('pnpm pack made no tarball of @gristlite/formula');
  run('pnpm', ['pack', '--pack-destination', scratch], core);
  const tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz') && f !== formulaTarball);
  if (!tarball) throw new Error('pnpm pack made no tarball');
  writeFileSync(
    join(scratch, 'package.json'),
    JSON.stringify(
      {
        name: 'scratch-embedder',
        private: true,
        type: 'module',
        dependencies: {'@gristlite/core': `file:./${tarball}`, '@gristlite/formula': `file:./${formulaTarball}`},
        devDependencies: {
          typescript: rootPkg.devDependencies.typescript,
          '@types/node': rootPkg.devDependencies['@types/node'],
        },
        // Core's dependency on @gristlite/formula is the packed one, not the registry's.
        pnpm: {
          onlyBuiltDependencies: ['better-sqlite3'],
          overrides: {'@gristlite/formula': `file:./${formulaTarball}`},
        },
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
  // The example's TypeScript, checked against the package's published declarations only.
  const source = readFileSync(join(core, 'examples', 'embed.ts'), 'utf8').replace(
    /from '\.\.\/src\/index\.js'/g,
    "from '@gristlite/core'",
  );
  writeFileSync(join(scratch, 'embed.ts'), source);
  writeFileSync(
    join(scratch, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
      },
      files: ['embed.ts'],
    }),
  );
  try {
    run(process.execPath, [join(scratch, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', scratch], scratch);
  } catch (e) {
    throw new Error(
      `strict tsc of the example against the packed declarations failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`,
    );
  }
  const out = run(process.execPath, ['embed.js'], scratch);
  process.stdout.write(out);
  console.log(
    `pack-check: ${tarball} installed into a scratch project; the embedding example type-checked (strict) and ran`,
  );
  // @gristlite/formula's README example, as a reader would paste it.
  const readme = readFileSync(join(formula, 'README.md'), 'utf8');
  const block = /```js\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block?.includes("from '@gristlite/formula'")) throw new Error('packages/formula/README.md has no ```js example');
  writeFileSync(join(scratch, 'formula-example.mjs'), block);
  const printed = run(process.execPath, ['formula-example.mjs'], scratch);
  process.stdout.write(printed);
  const expected = [...block.matchAll(/console\.log\(.*\);\s*\/\/ (.*)$/gm)].map((m) => m[1].trim());
  // console.log colours numbers and booleans when the environment asks for colour (CI's does).
  const lines = printed
    .replace(/\x1b\[\d+m/g, '')
    .trimEnd()
    .split('\n');
  if (expected.length !== lines.length || expected.some((e, i) => e !== lines[i].trim()))
    throw new Error(`the formula README example printed\n${printed}but its comments say\n${expected.join('\n')}`);
  console.log(`pack-check: ${formulaTarball}'s README example ran from the packed tarball and printed what it says`);
} finally {
  if (process.env.PACK_CHECK_KEEP) console.log(`scratch project kept: ${scratch}`);
  else rmSync(scratch, {recursive: true, force: true});
}
