/** Where the golden files are, and reading and writing them. */
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs';
import {join} from 'node:path';
import {fileURLToPath} from 'node:url';
import type {Golden} from './session.js';

/** The Grist version the recordings are of. */
export const GRIST_VERSION = '1.7.17';

/** `packages/conformance/golden/grist-1.7.17` (from dist/src/recorded). */
export function goldenDir(): string {
  return (
    process.env.GRISTLITE_GOLDEN_DIR ??
    fileURLToPath(new URL(`../../../golden/grist-${GRIST_VERSION}/`, import.meta.url))
  );
}

export function readGolden(scenario: string, dir = goldenDir()): Golden | undefined {
  const file = join(dir, `${scenario}.json`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Golden) : undefined;
}

/** One step per line group, indented, so that a re-recording's diff shows what changed. */
export function writeGolden(golden: Golden, dir = goldenDir()): void {
  mkdirSync(dir, {recursive: true});
  writeFileSync(join(dir, `${golden.scenario}.json`), `${JSON.stringify(golden, null, 1)}\n`);
}
