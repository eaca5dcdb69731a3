// Statement checks and in-process execution of the SQL sandbox (no worker processes here).
import Database from 'better-sqlite3';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {BadRequest} from '../src/base/errors.js';
import {executeSelect, openReadOnly, SqlUserError, userMessage} from '../src/sql/execute.js';
import {
  effectiveTimeoutMs,
  firstStatementEnd,
  parameterNames,
  selectText,
  sqlParams,
  sqlTimeoutFromEnv,
} from '../src/sql/statement.js';
import {copyFixture, withFixtures} from './doc-helpers.js';

const ftest = withFixtures(test);

const caps = {maxRows: 1000, maxBytes: 1 << 20};

function throwsBadRequest(fn: () => unknown, message: string | RegExp): void {
  try {
    fn();
  } catch (e) {
    assert.instance(e, BadRequest);
    if (typeof message === 'string') {
      assert.is((e as Error).message, message);
    } else {
      assert.match((e as Error).message, message);
    }
    return;
  }
  assert.unreachable('expected a BadRequest');
}

test('selectText: Grist checks, wrapping, first statement only', () => {
  assert.is(selectText('select * from Table1;'), 'select * from (select * from Table1)');
  assert.is(selectText('  SeLeCT * from Table1'), 'select * from (  SeLeCT * from Table1)');
  for (const sql of ['delete from Table1', '', ';']) {
    throwsBadRequest(() => selectText(sql), 'only select statements are supported');
  }
  // Only one trailing `;` goes; a second one ends the (now incomplete) statement, which SQLite
  // reports as Grist's does: `near ";": syntax error`.
  assert.is(selectText('select 1;;'), 'select * from (select 1;');
  assert.is(
    selectText('select * from Table1); delete from Table1 where id in (select id from Table1'),
    'select * from (select * from Table1);',
  );
});

test('firstStatementEnd: quotes, identifiers and comments hide semicolons', () => {
  for (const text of [`select ';' as "a;b", [c;d], \`e;f\` -- g;\n /* h; */ ; x`, `select 'it''s;' ; x`]) {
    assert.is(firstStatementEnd(text), text.lastIndexOf(';'));
  }
  assert.is(firstStatementEnd('select 1'), -1);
  assert.is(firstStatementEnd(`select 'open;`), -1);
  assert.is(firstStatementEnd('select 1 /* comment to the end;'), -1);
  assert.is(firstStatementEnd('select 1 --;'), -1);
});

test('sqlParams: JSON values bind, booleans as 1/0, others refused', () => {
  assert.equal(sqlParams(null), []);
  assert.equal(sqlParams([1, 'a', null, true, false]), [1, 'a', null, 1, 0]);
  throwsBadRequest(() => sqlParams([{a: 1}]), /args\[0\] must be/);
  throwsBadRequest(() => sqlParams([[1]]), /args\[0\] must be/);
});

test('effectiveTimeoutMs: a request can only lower the default, 0 means default', () => {
  assert.is(effectiveTimeoutMs(1000), 1000);
  assert.is(effectiveTimeoutMs(1000, 0), 1000);
  assert.is(effectiveTimeoutMs(1000, 10), 10);
  assert.is(effectiveTimeoutMs(1000, 5000), 1000);
  assert.is(effectiveTimeoutMs(1000, -5), 0);
});

test('sqlTimeoutFromEnv: GRISTLITE_ first, then GRIST_, then 1000', () => {
  assert.is(sqlTimeoutFromEnv({}), 1000);
  assert.is(sqlTimeoutFromEnv({GRIST_SQL_TIMEOUT_MSEC: '250'}), 250);
  assert.is(sqlTimeoutFromEnv({GRIST_SQL_TIMEOUT_MSEC: '250', GRISTLITE_SQL_TIMEOUT_MSEC: '40'}), 40);
  assert.throws(() => sqlTimeoutFromEnv({GRISTLITE_SQL_TIMEOUT_MSEC: 'soon'}), /non-negative integer/);
});

ftest('executeSelect: only a pure read passes the prepared-statement check', () => {
  const db = openReadOnly(copyFixture('Hello.grist'));
  try {
    // Unwrapped texts, to exercise the check that backs up the wrapping.
    for (const text of ["attach database 'x.db' as x", 'delete from Table1 returning id', 'pragma user_version = 3']) {
      assert.throws(
        () => executeSelect(db, text, [], caps),
        (e: Error) => e instanceof SqlUserError && e.message === 'only select statements are supported',
      );
    }
    assert.is(executeSelect(db, 'select id from Table1 where id = ?', [2], caps), '[{"fields":{"id":2}}]');
    assert.is(db.pragma('query_only', {simple: true}), 1);
    assert.is(db.pragma('trusted_schema', {simple: true}), 0);
  } finally {
    db.close();
  }
});

ftest('executeSelect: caps, argument errors and SQLite messages', () => {
  const db = openReadOnly(copyFixture('Hello.grist'));
  const msg = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      return userMessage(e);
    }
    return 'no error';
  };
  try {
    const rows = 'with recursive c(x) as (select 1 union all select x+1 from c limit 11) select x from c';
    assert.match(msg(() => executeSelect(db, rows, [], {maxRows: 10, maxBytes: 1e6}))!, /more than 10 rows/);
    assert.is(JSON.parse(executeSelect(db, rows, [], {maxRows: 11, maxBytes: 1e6})).length, 11);
    const big = "select printf('%.*c', 5000, 'x') as s";
    assert.match(msg(() => executeSelect(db, big, [], {maxRows: 10, maxBytes: 2000}))!, /larger than 2000 bytes/);
    assert.is(
      msg(() => executeSelect(db, 'select ?', [1, 2], caps)),
      'SQLITE_RANGE: column index out of range',
    );
    assert.is(executeSelect(db, 'select ? as a, ? as b', [1], caps), '[{"fields":{"a":1,"b":null}}]');
    assert.is(
      executeSelect(db, 'select ?2 as b, :x as x, ?1 as a', [1, 2, 3], caps),
      '[{"fields":{"b":2,"x":3,"a":1}}]',
    );
    assert.is(
      msg(() => executeSelect(db, 'select * from (select 1;', [], caps)),
      'SQLITE_ERROR: near ";": syntax error',
    );
    assert.is(
      msg(() => executeSelect(db, 'select * from Foo', [], caps)),
      'SQLITE_ERROR: no such table: Foo',
    );
    assert.is(userMessage(new Error('bug')), undefined);
  } finally {
    db.close();
  }
});

test('parameterNames: SQLite numbering of ?, ?NNN and named parameters', () => {
  assert.equal(parameterNames('select ?, ?'), [null, null]);
  assert.equal(parameterNames('select ?2, ?1'), ['?1', '?2']);
  assert.equal(parameterNames('select ?3'), [null, null, '?3']);
  assert.equal(parameterNames('select :x, ?, :x, @y'), [':x', null, '@y']);
  assert.equal(parameterNames(`select '?', "?x", [?], ? -- ?\n /* ? */`), [null]);
});

// Issue 37: `?99999999` grew an array of 99,999,999 entries before SQLite saw the text (8 s on the
// event loop, then V8's "invalid size" crash). SQLite's own bound and wording come first now.
/** This process's CPU time so far, in ms. */
function cpuMs(): number {
  const {user, system} = process.cpuUsage();
  return (user + system) / 1000;
}

test('parameterNames: numbers and counts beyond SQLite limits are refused before any allocation', () => {
  const sqlite = new Database(':memory:');
  const sqliteSays = (sql: string) => {
    try {
      sqlite.prepare(sql);
      return 'accepted';
    } catch (e) {
      return `${(e as {code: string}).code}: ${(e as Error).message}`;
    }
  };
  const ours = (sql: string) => {
    try {
      return parameterNames(sql).length;
    } catch (e) {
      assert.instance(e, SqlUserError);
      return (e as Error).message;
    }
  };
  // CPU time, not wall time: other processes on a loaded machine must not fail it.
  const started = cpuMs();
  const range = 'SQLITE_ERROR: variable number must be between ?1 and ?32766';
  const tooMany = 'SQLITE_ERROR: too many SQL variables';
  const cases: Array<[string, string | number]> = [
    ['select ?99999999', range],
    ['select ?32767', range],
    ['select ?0', range],
    [`select ?${'9'.repeat(400)}`, range],
    [`select ?${'0'.repeat(400)}7`, 7],
    ['select ?32766', 32766],
    [`select 1 in (${'?,'.repeat(32765)}?)`, 32766],
    [`select 1 in (${'?,'.repeat(32766)}?)`, tooMany],
    ['select ?32766, ?', tooMany],
    ['select ?32766, :x', tooMany],
  ];
  for (const [sql, expected] of cases) {
    assert.is(ours(sql), expected, sql.slice(0, 40));
    // SQLite's own verdict, so that the wording and the bound stay SQLite's.
    assert.is(sqliteSays(sql), typeof expected === 'number' ? 'accepted' : expected, sql.slice(0, 40));
  }
  sqlite.close();
  assert.ok(cpuMs() - started < 500, `took ${cpuMs() - started} ms of CPU`);
});

test('parameterNames: one pass over the text, however many parameters it has', () => {
  // 1 MB (the body limit) of parameters; a scan that copied the rest of the text at each one would take minutes.
  const repeats = 'select ' + '?1, :a, @b, $c, '.repeat(60000) + '1';
  const started = cpuMs();
  assert.equal(parameterNames(repeats), ['?1', ':a', '@b', '$c']);
  assert.ok(cpuMs() - started < 1000, `took ${cpuMs() - started} ms of CPU`);
});

test.run();
