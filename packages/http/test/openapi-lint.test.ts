// The OpenAPI document checked by a real validator (Redocly CLI, its recommended ruleset), offline,
// and docs/api.md checked against what the route table generates.
import {spawnSync} from 'node:child_process';
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {createRequire} from 'node:module';
import {tmpdir} from 'node:os';
import {dirname, join} from 'node:path';
import {fileURLToPath} from 'node:url';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {allRoutes, openApiDocument} from '../src/index.js';

const require = createRequire(import.meta.url);
const REDOCLY = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

interface LintReport {
  totals: {errors: number; warnings: number};
  problems: {ruleId: string; severity: string; message: string; location?: {pointer?: string}[]}[];
}

function lint(doc: unknown): LintReport {
  const dir = mkdtempSync(join(tmpdir(), 'gl-redocly-'));
  try {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    // The recommended ruleset; no telemetry or update check (offline).
    writeFileSync(join(dir, 'redocly.yaml'), 'extends:\n  - recommended\n');
    const r = spawnSync(
      process.execPath,
      [REDOCLY, 'lint', '--format=json', '--config', join(dir, 'redocly.yaml'), file],
      {
        cwd: dir,
        encoding: 'utf8',
        timeout: 120_000,
        env: {...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1'},
      },
    );
    const start = r.stdout.indexOf('{');
    assert.ok(start >= 0, `redocly printed no report: ${r.stderr}`);
    return JSON.parse(r.stdout.slice(start)) as LintReport;
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
}

const describe = (rep: LintReport) =>
  rep.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} ${p.location?.[0]?.pointer ?? ''}`).join('\n');

test('redocly lint (recommended): no errors, no warnings', () => {
  const rep = lint(openApiDocument(allRoutes(), '1.0.1'));
  assert.is(rep.totals.errors, 0, describe(rep));
  assert.is(rep.totals.warnings, 0, describe(rep));
});

test('the validator is live: it flags a document without license, servers or error responses', () => {
  const doc = JSON.parse(JSON.stringify(openApiDocument(allRoutes(), '1.0.1')));
  delete doc.info.license;
  delete doc.servers;
  for (const ops of Object.values(doc.paths) as Record<string, {responses: Record<string, unknown>}>[]) {
    for (const op of Object.values(ops))
      for (const code of Object.keys(op.responses)) if (code !== '200') delete op.responses[code];
  }
  doc.paths['/api/orgs'].get.responses = {};
  const rep = lint(doc);
  const rules = new Set(rep.problems.map((p) => p.ruleId));
  for (const rule of ['info-license', 'no-empty-servers', 'operation-4xx-response', 'operation-2xx-response']) {
    assert.ok(rules.has(rule), `${rule} not reported:\n${describe(rep)}`);
  }
  assert.ok(rep.totals.errors > 0);
});

test('docs/api.md is what scripts/api-doc.mjs generates from the route table', () => {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'api-doc.mjs'), '--stdout'], {encoding: 'utf8'});
  assert.is(r.status, 0, r.stderr);
  assert.ok(
    r.stdout === readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8'),
    'docs/api.md is stale: run `pnpm build && node scripts/api-doc.mjs`',
  );
});

test.run();
