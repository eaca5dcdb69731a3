// A target's skip list: a named test is registered as skipped (not run, not in the total), and an
// entry that names no test is refused, so a renamed test cannot hide behind a stale entry.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {areaSuite, type Target} from '../src/index.js';
import {checkSkipList} from '../src/world.js';

const target = (skip: Record<string, string>): Target => ({
  name: 'skip-probe',
  skip,
  start: () => Promise.reject(new Error('not started in this test')),
});

test('a skipped test does not run; the others do', async () => {
  const ran: string[] = [];
  const t = target({'probe: second': 'cannot run here'});
  const s = areaSuite(t, 'probe');
  s('first', () => void ran.push('first'));
  s('second', () => void ran.push('second'));
  s('third', () => void ran.push('third'));
  // uvu's run() queues the suite; it runs after this file's tests. The check is its last test (an
  // error thrown by an uvu 0.5 hook is not reported as a failure).
  s('fourth: the skipped test did not run', () => assert.equal(ran, ['first', 'third']));
  s.run();
  checkSkipList(t, ['probe']);
});

test('a skip entry naming no test is refused, with the entry in the message', () => {
  const t = target({'probe2: renamed': 'stale'});
  areaSuite(t, 'probe2')('present', () => {});
  assert.throws(() => checkSkipList(t, ['probe2']), /skip list names no test: 'probe2: renamed'/);
  // Entries of areas not registered (GRISTLITE_CONFORMANCE_ONLY) are not checked.
  checkSkipList(t, []);
});

test.run();
