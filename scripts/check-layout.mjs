// The layout rules of issue 39 §3, checked on every package's sources (tests aside):
// - no import cycle across files of different folders;
// - none inside one folder through more than three files;
// - no file over 600 lines unless its first comment says why it is one thing ("One thing:"); the
//   conformance suites (tests) and generated files aside;
// - a folder with an index.ts is entered only through it: files outside the folder (its own
//   subfolders aside) import the index, not the files behind it.
// What the tree broke when the rules came is listed in scripts/layout-baseline.json; a violation
// not listed fails, and so does a listed one that is gone (remove it: the list only shrinks).
// `node scripts/check-layout.mjs --write` rewrites the list from the tree (for that review only).
import {existsSync, readFileSync, readdirSync, statSync, writeFileSync} from 'node:fs';
import {dirname, join, relative, resolve} from 'node:path';

const root = resolve(new URL('..', import.meta.url).pathname);
const MAX_LINES = 600;
const baselinePath = join(root, 'scripts', 'layout-baseline.json');

function sources(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const files = [];
for (const group of ['packages', 'adapters']) {
  for (const pkg of readdirSync(join(root, group))) {
    const src = join(root, group, pkg, 'src');
    if (existsSync(src)) files.push(...sources(src));
  }
}
const known = new Set(files);

// Relative imports (static, dynamic and re-exports), resolved from `.js` to the `.ts` source.
const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^'"`;]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;
const edges = new Map();
const pastIndex = [];
for (const f of files) {
  const text = readFileSync(f, 'utf8');
  const to = new Set();
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2];
    const target = resolve(dirname(f), spec.replace(/\.js$/, '.ts'));
    const candidates = [target, target.replace(/\.ts$/, '/index.ts')];
    const hit = candidates.find((c) => known.has(c));
    // Type imports count: a cycle through types alone still ties the parts together.
    if (hit) to.add(hit);
    const folder = hit && dirname(hit);
    if (
      hit &&
      !hit.endsWith('/index.ts') &&
      known.has(join(folder, 'index.ts')) &&
      folder !== dirname(f) &&
      !dirname(f).startsWith(`${folder}/`)
    )
      pastIndex.push(`entered past its index: ${relative(root, f)} -> ${relative(root, hit)}`);
  }
  edges.set(f, [...to]);
}

// Strongly connected components (Tarjan, iterative).
function components() {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const out = [];
  for (const start of files) {
    if (idx.has(start)) continue;
    const work = [[start, 0]];
    idx.set(start, index);
    low.set(start, index++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const top = work[work.length - 1];
      const [v, i] = top;
      const next = edges.get(v)[i];
      if (next !== undefined) {
        top[1]++;
        if (!idx.has(next)) {
          idx.set(next, index);
          low.set(next, index++);
          stack.push(next);
          onStack.add(next);
          work.push([next, 0]);
        } else if (onStack.has(next)) low.set(v, Math.min(low.get(v), idx.get(next)));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(v)));
      }
      if (low.get(v) === idx.get(v)) {
        const comp = [];
        let w;
        do {
          w = stack.pop();
          onStack.delete(w);
          comp.push(w);
        } while (w !== v);
        if (comp.length > 1) out.push(comp);
      }
    }
  }
  return out;
}

const rel = (f) => relative(root, f);
const violations = [];
for (const comp of components()) {
  const dirs = new Set(comp.map((f) => dirname(f)));
  const names = comp.map(rel).sort();
  if (dirs.size > 1) violations.push(`cycle across folders: ${names.join(' ')}`);
  else if (comp.length > 3)
    violations.push(`cycle of ${comp.length} files in ${rel([...dirs][0])}: ${names.join(' ')}`);
}
// The conformance suites are tests, and generated files are not read: the line rule leaves them out.
const sized = files.filter((f) => !rel(f).startsWith('packages/conformance/') && !f.includes('/generated/'));
for (const f of sized) {
  const text = readFileSync(f, 'utf8');
  const lines = text.split('\n').length;
  if (lines <= MAX_LINES) continue;
  const first = /^\s*(\/\*[\s\S]*?\*\/|(?:\/\/[^\n]*\n)+)/.exec(text)?.[1] ?? '';
  if (!/One thing:/.test(first)) violations.push(`over ${MAX_LINES} lines: ${rel(f)}`);
}
violations.push(...new Set(pastIndex));
violations.sort();

if (process.argv.includes('--write')) {
  writeFileSync(baselinePath, `${JSON.stringify(violations, null, 2)}\n`);
  console.log(`layout: ${violations.length} known violations written to ${rel(baselinePath)}`);
  process.exit(0);
}
const baseline = new Set(existsSync(baselinePath) ? JSON.parse(readFileSync(baselinePath, 'utf8')) : []);
const fresh = violations.filter((v) => !baseline.has(v));
const gone = [...baseline].filter((v) => !violations.includes(v));
for (const v of fresh) console.log(`new: ${v}`);
for (const v of gone) console.log(`fixed (remove it from ${rel(baselinePath)}): ${v}`);
console.log(
  `layout: ${files.length} files, ${violations.length} violations (${baseline.size} known, ${fresh.length} new, ${gone.length} gone)`,
);
process.exit(fresh.length || gone.length ? 1 : 0);
