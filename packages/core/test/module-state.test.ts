// Issue 12: core keeps no module-level mutable state. Per-document and per-engine state lives on
// the Engine and on each OpenDocument; what a module may keep is listed here with the reason.
// The check reads core's sources and those of the formula language core runs (@gristlite/formula,
// listed as `formula/...`): every top-level `let`, and every top-level Map/Set/WeakMap that its
// module changes (`.set(`, `.add(`, `.delete(`, `.clear(`), must be in ALLOWED.
import {readdirSync, readFileSync, statSync} from 'node:fs';
import {join, relative} from 'node:path';
import {fileURLToPath} from 'node:url';
import {test} from 'uvu';
import * as assert from 'uvu/assert';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const FORMULA_SRC = fileURLToPath(new URL('../../../formula/src', import.meta.url));

const ALLOWED: Record<string, string> = {
  // Memos of pure functions, bounded (BoundedMap or an explicit cap), keyed by inputs such as time
  // zones, formats and type strings: they change no answer, only its cost.
  'formula/cells/coltypes/index.ts typeCache': 'memo, capped at 1000',
  'formula/cells/coltypes/index.ts converterCache': 'memo, capped at 1000',
  'formula/cells/coltypes/date.ts compiled': 'memo of parsed date formats, capped',
  'formula/cells/coltypes/numeric.ts symbolsCache': 'memo of locale number symbols, capped',
  'formula/pyvalues/zones.ts formatters': 'memo of Intl formatters per zone (BoundedMap)',
  'formula/cells/moment-format.ts abbrCache': 'memo (BoundedMap)',
  'formula/convert.ts converters': 'memo (BoundedMap)',
  'formula/convert.ts floatConverters': 'memo (BoundedMap)',
  'formula/modules/re.ts cache': 'memo of translated regular expressions, capped',
  'formula/modules/re.ts patternCache': 'memo of compiled patterns, capped',
  'formula/functions/text.ts phoneUtil': "libphonenumber's singleton, loaded on first use",
  'export/xlsx.ts excel': 'the exceljs module, imported at the first XLSX download',
  // Scratch memory, no state: each use starts by resetting it and nothing read from it outlives
  // the synchronous call that wrote it (the body is bound by SQLite before the next write).
  'doc/history/format.ts scratch': 'the buffer action bodies are written into, reused (capped at 4 MB)',
  'formula/library.ts registered': 'the function library, built once (immutable after)',
  // The formula library's ambient evaluation context: set by the engine around each synchronous
  // recalculation and restored after it, so that library functions (TODAY, DATEADD, loops)
  // need no context argument. Never holds state between two writes.
  'formula/budget.ts currentBudget': 'evaluation context, set and restored around each recalc',
  'formula/datetime.ts clock': 'evaluation context (the clock NOW() reads), set per write',
  'formula/functions/date.ts docZone': "evaluation context (the document's zone), set per write",
  'formula/functions/lookup.ts docUrl': "evaluation context (the document's URL), set per write",
  'webhooks/events.ts statements': 'prepared statements per connection (WeakMap: freed with it)',
  'webhooks/schema.ts ensured': 'connections whose webhook tables exist (WeakSet: freed with them)',
  'webhooks/schema.ts upgraded': 'connections whose outbox has its apiKeyId column (WeakSet: freed with them)',
  'webhooks/schema.ts secretsUpgraded':
    'connections whose secrets table has its includePrevious column (WeakSet: freed with them)',
  'formula/compiler.ts excValues': 'WeakMap attaching Python exception objects to exceptions',
  // Not engine code.
  'sql/worker.ts open': "the SQL worker child process's own open files (a process entry point)",
  'testing/fixtures.ts found': 'test helper: where the fixture documents are, looked up once',
};

function* sources(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (name.endsWith('.ts')) yield path;
  }
}

function moduleState(): string[] {
  const found: string[] = [];
  const files = [
    ...[...sources(SRC)].map((path) => ({path, file: relative(SRC, path)})),
    ...[...sources(FORMULA_SRC)].map((path) => ({path, file: `formula/${relative(FORMULA_SRC, path)}`})),
  ];
  for (const {path, file} of files) {
    const text = readFileSync(path, 'utf8');
    for (const m of text.matchAll(/^(?:export )?let (\w+)/gm)) found.push(`${file} ${m[1]}`);
    for (const m of text.matchAll(
      /^(?:export )?const (\w+)(?::[^=]+)? = new (Map|Set|WeakMap|WeakSet|BoundedMap)\b/gm,
    )) {
      const name = m[1];
      // A BoundedMap exists to be written (perhaps through an alias); other collections count when written.
      if (m[2] === 'BoundedMap' || new RegExp(`\\b${name}\\.(set|add|delete|clear)\\(`).test(text))
        found.push(`${file} ${name}`);
    }
  }
  return found.sort();
}

test('core has no module-level mutable state beyond the listed memos and evaluation context', () => {
  const found = moduleState();
  const unexplained = found.filter((k) => !(k in ALLOWED));
  assert.equal(unexplained, [], `module-level state without a reason in ALLOWED: ${unexplained.join(', ')}`);
  // The list stays current: an entry whose state is gone is removed.
  const stale = Object.keys(ALLOWED).filter((k) => !found.includes(k));
  assert.equal(stale, [], `ALLOWED names state that no longer exists: ${stale.join(', ')}`);
});

test('the check finds what it looks for', () => {
  // The webhook waker, read cache and bulk-update values used to be module state; they are gone.
  const found = moduleState();
  for (const gone of [
    'webhooks/events.ts waker',
    'doc/gristdoc.ts readCache',
    'doc/formulas.ts bulkValues',
    'webhooks/delivery.ts registry',
  ]) {
    assert.not.ok(found.includes(gone), gone);
  }
  assert.ok(found.includes('formula/budget.ts currentBudget'), 'a known top-level let is found');
});

test.run();
