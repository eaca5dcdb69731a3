// ChangeSet.list(): one bulk operation is listed as it came, and equals what merging gives.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {ChangeSet} from '../src/doc/changes.js';

test('one operation on ascending ids lists the same as the same ids given in two operations', () => {
  for (const kind of ['add', 'update', 'remove'] as const) {
    const one = new ChangeSet();
    const two = new ChangeSet();
    if (kind === 'update') {
      one.update('T', [1, 2, 5], ['A']);
      two.update('T', [1, 2], ['A']);
      two.update('T', [5], ['A']);
    } else {
      one[kind]('T', [1, 2, 5]);
      two[kind]('T', [1, 2]);
      two[kind]('T', [5]);
    }
    assert.equal(one.list(), two.list(), kind);
  }
});

test('repeated or unordered ids in one operation are merged, not listed twice', () => {
  const c = new ChangeSet();
  c.update('T', [3, 1, 3]);
  assert.equal(c.list(), [{tableId: 'T', added: [], updated: [3, 1], removed: [], columns: null}]);
});

test('an add then a removal of the same row lists nothing; a list does not share the ids given', () => {
  const c = new ChangeSet();
  c.add('T', [7]);
  c.remove('T', [7]);
  assert.equal(c.list(), []);
  const ids = [1, 2];
  const d = new ChangeSet();
  d.add('T', ids);
  d.list()[0].added.push(99);
  assert.equal(d.list()[0].added, [1, 2]);
});

test.run();
