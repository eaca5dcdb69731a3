#!/usr/bin/env node
// Turns the JSON reports of mocha (`--reporter json-stream`: one JSON event a line), one per test
// file of Grist's REST tests, into the per-file table of docs/grist-docapi.md and the list of
// failing cases:
//   node scripts/grist-docapi/summary.mjs DIR     (DIR holds <File>.jsonl, as run.mjs writes them)
// json-stream rather than json: the json reporter wrote nothing at all for a file whose failures
// carry axios errors (DocApiOrgLimitFlags), while json-stream writes each result as it comes.
import {readdirSync, readFileSync} from 'node:fs';
import {basename, join} from 'node:path';
import {fileURLToPath} from 'node:url';

/** The first line of a failure's message, without mocha's colour codes. */
function reason(err) {
  const text = String(err?.message ?? err ?? '').replace(/\x1b\[[0-9;]*m/g, '');
  return text.split('\n')[0].slice(0, 200);
}

/**
 * One report: counts, and each failure (a hook's included) with its title and reason. Pending
 * (skipped) tests are counted from the closing event; a report without one (mocha stopped) is
 * marked incomplete.
 */
export function readReport(file) {
  // Other output (the tests' own logging) may share stdout: only mocha's event lines count.
  const events = readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return null;
      }
    })
    .filter((e) => Array.isArray(e) && ['start', 'pass', 'fail', 'end'].includes(e[0]));
  const of = (kind) => events.filter(([k]) => k === kind).map(([, e]) => e);
  const end = of('end')[0];
  return {
    file: basename(file, '.jsonl') + (end ? '' : ' (incomplete)'),
    passed: of('pass').length,
    failed: of('fail').length,
    pending: end?.pending ?? 0,
    failures: of('fail').map((t) => ({title: t.fullTitle, reason: reason(t.err)})),
  };
}

/** The markdown table, a total row last. */
export function table(reports) {
  const rows = ['| file | passed | failed | pending |', '|---|---:|---:|---:|'];
  const total = {passed: 0, failed: 0, pending: 0};
  for (const r of reports) {
    rows.push(`| ${r.file} | ${r.passed} | ${r.failed} | ${r.pending} |`);
    for (const k of Object.keys(total)) total[k] += r[k];
  }
  rows.push(`| **total** | **${total.passed}** | **${total.failed}** | **${total.pending}** |`);
  return {text: rows.join('\n'), total};
}

/** The reports of a directory, in file order. */
export function readDir(dir) {
  return readdirSync(dir)
    .filter((f) => /^DocApi\w*\.jsonl$/.test(f))
    .sort()
    .map((f) => readReport(join(dir, f)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: summary.mjs DIR');
    process.exit(2);
  }
  const reports = readDir(dir);
  console.log(table(reports).text);
  for (const r of reports) {
    for (const f of r.failures) console.log(`\n${r.file}: ${f.title}\n    ${f.reason}`);
  }
}
