// A condition the formula engine evaluates runs on the event loop: one request's condition gets
// GRISTLITE_WHERE_MAX_MSEC over all its rows (the lower of it and the formula budget), not a
// recalculation's 30 s. Each row here is far under the per-cell budget; the rows together are not.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc} from '../src/doc/index.js';
import {tempPath} from './doc-helpers.js';

const SLOW = 'len(str(list(range(3000)))) > 0 and $N >= 0';

function docWith(rows: number): string {
  const path = tempPath();
  const doc = GristDoc.create(path);
  doc.addTables([{id: 'T', columns: [{id: 'N', fields: {type: 'Int'}}]}]);
  doc.addColumnar('T', {N: Array.from({length: rows}, (_, i) => i)}, {parse: false});
  doc.close();
  return path;
}

test('a condition over many rows stops at the where time bound, naming it; under it, it answers', () => {
  const path = docWith(1000);
  const tight = GristDoc.open(path, {where: {maxMs: 20}});
  try {
    assert.throws(
      () => tight.whereIds('T', SLOW, {forceEngine: true}),
      (e: Error) => /TimeoutError/.test(e.message) && /GRISTLITE_WHERE_MAX_MSEC/.test(e.message),
    );
  } finally {
    tight.close();
  }
  const roomy = GristDoc.open(path, {where: {maxMs: 600_000}});
  try {
    assert.is(roomy.whereIds('T', SLOW, {forceEngine: true}).length, 1000);
  } finally {
    roomy.close();
  }
});

test.run();
