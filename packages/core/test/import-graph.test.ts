// The shape of core's import graph (issue 26 §5): no module cycle at run time, no cycle at all
// (type imports included) between the document layer (doc/) and the formula engine (formula/),
// the Python value layer (pyvalues/) below both, and the formula engine's parts within size.
// The check reads core's sources and the formula language's (@gristlite/formula, listed as
// `formula/...`; core's imports of the package are edges to `formula/index.ts`, its one entry).
import {readdirSync, readFileSync, statSync} from 'node:fs';
import {dirname, join, relative, resolve} from 'node:path';
import {fileURLToPath} from 'node:url';
import {test} from 'uvu';
import * as assert from 'uvu/assert';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const FORMULA_SRC = fileURLToPath(new URL('../../../formula/src', import.meta.url));
/** A module's name in the graph: core's relative to its src, the package's under `formula/`. */
const key = (p: string): string =>
  p.startsWith(FORMULA_SRC) ? `formula/${relative(FORMULA_SRC, p)}` : relative(SRC, p);

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

interface Edge {
  to: string;
  /** Only types are imported (erased at run time). */
  typeOnly: boolean;
}

const IMPORT_RE = /(?:^|\n)\s*(?:import|export)\s+(type\s+)?([^'";]*?)\s*from\s*'(\.[^']*|@gristlite\/formula)'/g;

/** Module (path relative to src) -> its relative imports. */
function importGraph(): Map<string, Edge[]> {
  const graph = new Map<string, Edge[]>();
  for (const file of [...sources(SRC), ...sources(FORMULA_SRC)]) {
    const edges: Edge[] = [];
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(IMPORT_RE)) {
      const names = m[2].trim();
      // `import {type A, type B} from` is erased as `import type {A, B}` is.
      const allTypes =
        /^\{[^}]*\}$/.test(names) &&
        names
          .slice(1, -1)
          .split(',')
          .map((n) => n.trim())
          .filter(Boolean)
          .every((n) => n.startsWith('type '));
      let target = m[3].startsWith('.')
        ? resolve(dirname(file), m[3]).replace(/\.js$/, '.ts')
        : join(FORMULA_SRC, 'index.ts');
      if (!target.endsWith('.ts')) target = join(target, 'index.ts');
      edges.push({to: key(target), typeOnly: Boolean(m[1]) || allTypes});
    }
    graph.set(key(file), edges);
  }
  return graph;
}

/** Strongly connected components of more than one module (Tarjan). */
function cycles(graph: Map<string, Edge[]>, withTypes: boolean): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const e of graph.get(v) ?? []) {
      if ((e.typeOnly && !withTypes) || !graph.has(e.to)) continue;
      if (!index.has(e.to)) {
        visit(e.to);
        low.set(v, Math.min(low.get(v)!, low.get(e.to)!));
      } else if (onStack.has(e.to)) low.set(v, Math.min(low.get(v)!, index.get(e.to)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

const graph = importGraph();

test('the import graph is read (sanity: the engine imports its parts)', () => {
  const engine = graph.get('formula/engine.ts')!.map((e) => e.to);
  assert.ok(engine.includes('formula/recalc.ts'), engine.join(' '));
  assert.ok(graph.get('doc/formulas.ts')!.some((e) => e.to === 'formula/index.ts'));
  assert.ok(graph.get('formula/index.ts')!.some((e) => e.to === 'formula/engine.ts'));
});

test('no module cycle at run time', () => {
  assert.equal(cycles(graph, false), []);
});

test('no cycle between doc/ and formula/, type imports included', () => {
  const crossing = cycles(graph, true).filter(
    (scc) => scc.some((f) => f.startsWith('doc/')) && scc.some((f) => f.startsWith('formula/')),
  );
  assert.equal(crossing, []);
});

test('the Python front end (formula/syntax/) imports nothing outside its folder, and others enter it by its index', () => {
  for (const [f, edges] of graph) {
    for (const e of edges) {
      if (f.startsWith('formula/syntax/')) assert.ok(e.to.startsWith('formula/syntax/'), `${f} imports ${e.to}`);
      else if (e.to.startsWith('formula/syntax/')) assert.is(e.to, 'formula/syntax/index.ts', `${f} imports ${e.to}`);
    }
  }
});

test('the Python value layer sits below both: pyvalues/ imports nothing from doc/ or formula/', () => {
  // (Both are in @gristlite/formula now: cells/ is Grist's value model, the rest the language.)
  const layer = [...graph.keys()].filter((f) => f.startsWith('formula/pyvalues/'));
  assert.ok(layer.length >= 4, layer.join(' '));
  const below = (to: string) => to.startsWith('formula/pyvalues/') || to === 'formula/memo.ts';
  for (const f of layer) for (const e of graph.get(f)!) assert.ok(below(e.to), `${f} imports ${e.to}`);
  // Both sides use it.
  assert.ok(graph.get('formula/values.ts')!.some((e) => e.to.startsWith('formula/pyvalues/')));
  assert.ok(graph.get('formula/cells/pyformat.ts')!.some((e) => e.to.startsWith('formula/pyvalues/')));
});

test('the formula engine is in parts of at most 600 lines', () => {
  const parts = [
    'engine',
    'engine-types',
    'state',
    'rows',
    'tables',
    'indexes',
    'deps',
    'reads',
    'recalc',
    'open',
    'schema',
    'data',
    'globals',
  ];
  for (const p of parts) {
    const lines = readFileSync(join(FORMULA_SRC, `${p}.ts`), 'utf8').split('\n').length;
    assert.ok(lines <= 600, `formula/${p}.ts has ${lines} lines`);
  }
});

test.run();
