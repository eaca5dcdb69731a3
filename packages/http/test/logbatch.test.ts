// D185: the server's log lines of one event-loop turn go out in one write, and none is lost: at the
// end of the turn, past the per-turn bound, at exit(), at an uncaught exception and at pino's fatal.
import {spawnSync} from 'node:child_process';
import {fileURLToPath} from 'node:url';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {createLogger} from '../src/index.js';

function sink() {
  const writes: string[] = [];
  let syncFlushes = 0;
  return {
    writes,
    syncFlushes: () => syncFlushes,
    dest: {
      write: (s: string) => void writes.push(s),
      flushSync: () => void syncFlushes++,
    },
  };
}
const lines = (writes: string[]) =>
  writes
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const turn = () => new Promise((r) => setImmediate(r));

test("one turn's lines go out in one write when the turn ends", async () => {
  const s = sink();
  const log = createLogger({GRISTLITE_LOG_LEVEL: 'info'}, s.dest);
  for (let i = 0; i < 5; i++) log.info({i}, 'request');
  assert.is(s.writes.length, 0);
  await turn();
  assert.is(s.writes.length, 1);
  assert.equal(
    lines(s.writes).map((l) => l.i),
    [0, 1, 2, 3, 4],
  );
  log.info({i: 5}, 'request');
  await turn();
  assert.is(s.writes.length, 2);
  assert.is(lines(s.writes).length, 6);
  // pino's line as before: level, ISO time, message.
  const [first] = lines(s.writes);
  assert.is(first.level, 30);
  assert.match(first.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.is(first.msg, 'request');
});

test('a turn logging more than the batch bound hands lines on without waiting for the turn', async () => {
  const s = sink();
  const log = createLogger({GRISTLITE_LOG_LEVEL: 'info'}, s.dest);
  const pad = 'x'.repeat(1000);
  for (let i = 0; i < 50; i++) log.info({i, pad}, 'request'); // ~52 KB: under the 64 KB bound
  assert.is(s.writes.length, 0);
  for (let i = 50; i < 80; i++) log.info({i, pad}, 'request');
  assert.is(s.writes.length, 1);
  await turn();
  assert.equal(
    lines(s.writes).map((l) => l.i),
    Array.from({length: 80}, (_, i) => i),
  );
});

test('fatal writes the held lines and flushes the sink synchronously', () => {
  const s = sink();
  const log = createLogger({GRISTLITE_LOG_LEVEL: 'info'}, s.dest);
  log.info({i: 1}, 'request');
  log.fatal({i: 2}, 'dying');
  assert.equal(
    lines(s.writes).map((l) => l.i),
    [1, 2],
  );
  assert.ok(s.syncFlushes() >= 1);
});

// A child process logging through the default (stdout) logger, then leaving in the given way.
const index = fileURLToPath(new URL('../src/index.js', import.meta.url));
function child(end: string): {lines: number[]; status: number | null} {
  const script = `
    import {createLogger} from ${JSON.stringify(index)};
    const log = createLogger({GRISTLITE_LOG_LEVEL: 'info'});
    for (let i = 0; i < 1000; i++) log.info({i}, 'request');
    setImmediate(() => {
      for (let i = 1000; i < 2000; i++) log.info({i}, 'request');
      ${end}
    });`;
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], {encoding: 'utf8'});
  const got = out.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l).i as number);
  return {lines: got, status: out.status};
}
const all = Array.from({length: 2000}, (_, i) => i);

test('every line reaches stdout at process.exit() in the turn that logged it', () => {
  const r = child('process.exit(3);');
  assert.is(r.status, 3);
  assert.equal(r.lines, all);
});

test('every line reaches stdout at an uncaught exception', () => {
  const r = child("throw new Error('crash');");
  assert.is(r.status, 1);
  assert.equal(r.lines, all);
});

test('every line reaches stdout when the loop ends by itself', () => {
  const r = child('');
  assert.is(r.status, 0);
  assert.equal(r.lines, all);
});

test.run();
