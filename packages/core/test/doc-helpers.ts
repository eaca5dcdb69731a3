// Shared helpers of the core test suites. The real Grist documents are found by the one finder of
// `@gristlite/core/testing` (src/testing/fixtures.ts), shared by every package's tests.
import {mkdtempSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {copyFixture as copyTo} from '../src/testing/fixtures.js';

export {FIXTURE_NAMES, fixturePath, needsFixtures, withFixtures} from '../src/testing/fixtures.js';

/** A fresh path in a new temporary directory. */
export function tempPath(name = 'doc.grist'): string {
  return join(mkdtempSync(join(tmpdir(), 'gl-doc-')), name);
}

/** Copies a fixture to a temporary directory (the originals are never opened for writing). */
export function copyFixture(name: string): string {
  return copyTo(name, mkdtempSync(join(tmpdir(), 'gl-doc-')));
}
