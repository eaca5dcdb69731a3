// Edge cases of the function library and datetime beyond Grist's doctests: Python types of results,
// laziness, Grist's cell encoding, IANA zones around DST (expected values from CPython's zoneinfo
// where it agrees with Grist's moment.tzinfo, from Grist's rules where they differ).
import {readdirSync, readFileSync} from 'node:fs';
import {join} from 'node:path';
import {fileURLToPath} from 'node:url';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {F, callAttr, check, lazyFn, tuple} from './formula-lib-helpers.js';
import {PyCallable, PyException, type Value, repr} from '../src/values.js';
import {
  PyDate,
  PyDateTime,
  dateClass,
  datetimeClass,
  timedeltaClass,
  dateFromCell,
  dateToCell,
  datetimeFromCell,
  datetimeToCell,
  tzinfoFor,
} from '../src/datetime.js';
import {gristFunctions} from '../src/functions/index.js';
import {PyType} from '../src/ops.js';

const iso = (v: Value) => callAttr(v, 'isoformat', [], null) as string;

test('int and float results are kept apart (Grist stores them differently)', () => {
  assert.is(typeof F.SUM.call([[1n, 2n]], null), 'bigint');
  assert.is(typeof F.SUM.call([[1n, 2.5]], null), 'number');
  assert.is(typeof F.ROUND.call([2n], null), 'number');
  assert.is(typeof F.CEILING.call([2.5], null), 'bigint');
  assert.is(typeof F.CEILING.call([2.5, 0.5], null), 'number');
  assert.is(typeof F.INT.call([2.5], null), 'bigint');
  assert.is(typeof F.MOD.call([7n, 2n], null), 'bigint');
  assert.is(typeof F.MOD.call([7.5, 2n], null), 'number');
  assert.is(typeof F.LEN.call(['abc'], null), 'bigint');
  assert.is(typeof F.MEDIAN.call([1n, 2n, 3n], null), 'bigint');
  assert.is(typeof F.MEDIAN.call([1n, 2n], null), 'number');
  assert.is(F.SUM.call([[]], null), 0n);
  assert.is(F.MAX.call([[]], null), 0n);
});

test('errors are Python exceptions of the right type', () => {
  check('AVERAGE([])', () => F.AVERAGE.call([[]], null), null, ['ZeroDivisionError', 'float division by zero']);
  check('MOD(1, 0)', () => F.MOD.call([1n, 0n], null), null, ['ZeroDivisionError', 'integer modulo by zero']);
  check('SQRT("a")', () => F.SQRT.call(['a'], null), null, ['TypeError', 'must be real number, not str']);
  check('DATE(2020, 1.5, 1)', () => F.DATE.call([2020n, 1.5, 1n], null), null, ['TypeError', null]);
  check('WEEKDAY(DATE(2020,1,1), 5)', () => F.WEEKDAY.call([F.DATE.call([2020n, 1n, 1n], null), 5n], null), null, [
    'ValueError',
    'Invalid return type 5',
  ]);
  check(
    'YEARFRAC(d1, d2, 7)',
    () => F.YEARFRAC.call([new PyDate(2020, 1, 1), new PyDate(2021, 1, 1), 7n], null),
    null,
    ['ValueError', 'Invalid basis argument 7'],
  );
  check('SUM(1, x=2)', () => F.SUM.call([1n], {x: 2n}), null, [
    'TypeError',
    "SUM() got an unexpected keyword argument 'x'",
  ]);
  const invalid = {
    pyType: 'AltText',
    getattr: () => {
      throw new PyException('InvalidTypedValue', 'Date');
    },
  };
  check('DATEADD(AltText)', () => F.DATEADD.call([invalid], {days: 1n}), null, ['InvalidTypedValue', 'Date']);
  check('DATEADD("2020-01-01")', () => F.DATEADD.call(['2020-01-01'], null), null, [
    'AttributeError',
    "'str' object has no attribute 'year'",
  ]);
  check('DATEVALUE("13/13/13")', () => F.DATEVALUE.call(['13/13/13'], null), null, ['ParserError', null]);
});

test('lazy arguments: IF, IFERROR, ISERR and ISERROR call callables and catch only Python errors', () => {
  const boom = lazyFn(() => {
    throw new PyException('ZeroDivisionError', 'division by zero');
  });
  assert.is(F.IF.call([false, boom, lazyFn(() => 17n)], null), 17n);
  assert.throws(
    () => F.IF.call([true, boom, 1n], null),
    (e: unknown) => (e as PyException).type === 'ZeroDivisionError',
  );
  assert.is(F.IFERROR.call([boom, 'X'], null), 'X');
  assert.is(F.IFERROR.call([boom], null), '');
  assert.is(F.ISERR.call([boom], null), true);
  assert.is(F.ISERROR.call([NaN], null), true);
  const timeout = lazyFn(() => {
    throw new PyException('TimeoutError', 'budget');
  });
  assert.throws(
    () => F.IFERROR.call([timeout, 'X'], null),
    (e: unknown) => (e as PyException).type === 'TimeoutError',
  );
  const jsBug = lazyFn(() => {
    throw new RangeError('stack');
  });
  assert.throws(() => F.ISERR.call([jsBug], null), RangeError);
});

test('text functions index code points, as Python does', () => {
  assert.is(F.LEN.call(['😀a'], null), 2n);
  assert.is(F.MID.call(['😀ab', 2n, 1n], null), 'a');
  assert.is(F.LEFT.call(['😀ab', 1n], null), '😀');
  assert.is(F.RIGHT.call(['ab😀', 1n], null), '😀');
  assert.is(F.RIGHT.call(['Text', 0n], null), 'Text');
  assert.is(F.FIND.call(['b', '😀ab'], null), 3n);
  assert.is(F.REGEXEXTRACT.call(['😀 abc', '\\w+'], null), 'abc');
  assert.is(F.PROPER.call(["they're 2nd-rate ÉCOLE"], null), "They'Re 2Nd-Rate École");
  // Grist's ROUND gives float(int) / p, never -0.0 (its FIXED(-0.001, 2) run in CPython is '0.00').
  assert.is(F.FIXED.call([-0.001, 2n], null), '0.00');
  assert.is(F.FIXED.call([1234567.891, 1n], null), '1,234,567.9');
  assert.is(F.DOLLAR.call([0.5, 0n], null), '$1');
  assert.is(F.VALUE.call(['1_000'], null), 1000n);
  assert.is(F.VALUE.call([' 1e3 '], null), 1000);
  assert.is(F.TRIM.call(['\t a  b \n'], null), 'a b');
  assert.is(F.CLEAN.call(['a\u0085b\u0007'], null), 'ab');
  assert.is(F.TASTEME.call(['123'], null), null);
});

test('the library has no stubs: every function is named as Grist names it and its results are checked', () => {
  assert.is(Object.keys(gristFunctions).length, 141);
  for (const [name, f] of Object.entries(gristFunctions)) {
    assert.ok(f instanceof PyCallable, name);
    assert.is(f.name, name);
  }
  // Every function whose result is determined is called with an expected result in the library's
  // tests: Grist's doctests (formula-lib-doctests), the edge cases here, CPython-checked values.
  // (SELF_HYPERLINK needs a document: its test is in packages/core/test.)
  const dirs = ['../../test/', '../../../core/test/'].map((d) => fileURLToPath(new URL(d, import.meta.url)));
  const sources = dirs
    .flatMap((dir) =>
      readdirSync(dir)
        .filter((f) => /^formula-lib-.*\.test\.ts$/.test(f))
        .map((f) => readFileSync(join(dir, f), 'utf8')),
    )
    .join('\n');
  const random = ['RAND', 'RANDBETWEEN', 'UUID'];
  const unchecked = Object.keys(gristFunctions).filter((n) => !random.includes(n) && !sources.includes(`F.${n}.call(`));
  assert.equal(unchecked, [], 'functions no test calls with an expected result');
  // The random ones, by what they promise (Python's random.random, randint, uuid4).
  const floats = Array.from({length: 50}, () => F.RAND.call([], null) as number);
  assert.ok(
    floats.every((x) => typeof x === 'number' && x >= 0 && x < 1),
    'RAND in [0, 1)',
  );
  assert.ok(new Set(floats).size > 40, 'RAND varies');
  const dice = Array.from({length: 300}, () => F.RANDBETWEEN.call([1n, 6n], null));
  assert.equal([...new Set(dice)].sort(), [1n, 2n, 3n, 4n, 5n, 6n], 'RANDBETWEEN: every value of 1..6, nothing else');
  assert.equal(F.RANDBETWEEN.call([3n, 3n], null), 3n);
  const ids = [F.UUID.call([], null), F.UUID.call([], null)] as string[];
  for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.not.equal(ids[0], ids[1]);
  for (const theirs of ['PREVIOUS', 'NEXT', 'RANK', 'VLOOKUP', 'PEEK', 'RECORD', 'CONTAINS', 'REQUEST']) {
    assert.not.ok(theirs in gristFunctions, theirs);
  }
});

test('Date cells are seconds at UTC midnight', () => {
  const d = dateFromCell(1704067200);
  assert.is(repr(d), 'datetime.date(2024, 1, 1)');
  assert.is(repr(dateFromCell(1704067200n)), 'datetime.date(2024, 1, 1)');
  assert.is(repr(dateFromCell(-86400.5)), 'datetime.date(1969, 12, 30)');
  assert.is(dateToCell(new PyDate(2024, 1, 1)), 1704067200);
  assert.is(dateToCell(new PyDateTime(2024, 1, 1, 23, 59)), 1704067200);
});

test('DateTime cells are instants shown in the column zone', () => {
  assert.is(iso(datetimeFromCell(1700000000, 'Europe/Paris')), '2023-11-14T23:13:20+01:00');
  assert.is(iso(datetimeFromCell(1700000000.5, 'America/New_York')), '2023-11-14T17:13:20.500000-05:00');
  assert.is(
    repr(datetimeFromCell(1700000000, 'America/New_York')),
    "datetime.datetime(2023, 11, 14, 17, 13, 20, tzinfo=moment.tzinfo('America/New_York'))",
  );
  // Both 01:30s of the NY fall-back keep their offsets.
  assert.is(iso(datetimeFromCell(1730611800, 'America/New_York')), '2024-11-03T01:30:00-04:00');
  assert.is(iso(datetimeFromCell(1730615400, 'America/New_York')), '2024-11-03T01:30:00-05:00');
  assert.is(iso(datetimeFromCell(-2208988800, 'Asia/Kolkata')), '1900-01-01T05:21:10+05:21:10');
  // An unknown zone is UTC, as Grist's DateTime type makes it.
  assert.is(iso(datetimeFromCell(0, 'Nowhere/Land')), '1970-01-01T00:00:00+00:00');
  assert.is(datetimeToCell(datetimeFromCell(1730615400, 'America/New_York')), 1730615400);
});

test('naive datetimes written to DateTime cells are read in the column zone (Grist: America/New_York)', () => {
  assert.is(datetimeToCell(new PyDateTime(2024, 7, 1, 12)), 1719849600);
  assert.is(datetimeToCell(new PyDateTime(2024, 1, 1), 'America/New_York'), 1704085200);
  assert.is(datetimeToCell(new PyDateTime(2024, 1, 1), 'UTC'), 1704067200);
  assert.is(datetimeToCell(new PyDate(2024, 1, 1), 'America/New_York'), 1704085200);
  // Ambiguous local time: the earlier offset (EDT); skipped local time: the new offset (EDT).
  assert.is(datetimeToCell(new PyDateTime(2024, 11, 3, 1, 30), 'America/New_York'), 1730611800);
  assert.is(datetimeToCell(new PyDateTime(2024, 3, 10, 2, 30), 'America/New_York'), 1710052200);
});

test('aware datetimes: wall-clock arithmetic within one tzinfo, instants across them', () => {
  const ny = tzinfoFor('America/New_York');
  const a = new PyDateTime(2024, 3, 9, 12, 0, 0, 0, ny);
  const b = a.binop('+', timedeltaClass.call([1n], null), false) as PyDateTime;
  assert.is(iso(b), '2024-03-10T12:00:00-04:00');
  assert.is(repr(b.binop('-', a, false) as Value), 'datetime.timedelta(days=1)');
  const utc = b.astimezone(tzinfoFor('UTC'));
  assert.is(iso(utc), '2024-03-10T16:00:00+00:00');
  assert.is(repr(utc.binop('-', a, false) as Value), 'datetime.timedelta(seconds=82800)');
  assert.is(callAttr(b, 'strftime', ['%Z %z'], null), 'EDT -0400');
  assert.is(callAttr(a, 'strftime', ['%Z %z'], null), 'EST -0500');
  assert.throws(() => a.compare(new PyDateTime(2024, 1, 1)), /naive/);
  assert.is(a.eq(new PyDateTime(2024, 3, 9, 12)), false);
});

test('DTIME and friends use the document zone', () => {
  const d = F.DTIME.call(['2020-01-01 10:00'], null);
  assert.is(iso(d), '2020-01-01T10:00:00-05:00');
  assert.is(F.DATE_TO_XL.call([d], null), 43831.416666666664);
  assert.is(repr(F.TODAY.call([], null)), 'datetime.date(2026, 11, 23)');
  assert.is(iso(F.NOW.call(['Asia/Tokyo'], null)), '2026-11-24T00:00:00+09:00');
  check('NOW("Not/AZone")', () => F.NOW.call(['Not/AZone'], null), null, ['KeyError', null]);
});

test('datetime classes are type objects for isinstance (a datetime is a date, not the reverse)', () => {
  assert.ok(dateClass instanceof PyType);
  assert.ok(dateClass.test(new PyDateTime(2020, 1, 1)));
  assert.not.ok(datetimeClass.test(new PyDate(2020, 1, 1)));
  assert.ok(timedeltaClass.test(timedeltaClass.call([1n], null)));
  assert.is(repr(dateClass), "<class 'datetime.date'>");
  assert.is(repr(dateClass.getattr('max')), 'datetime.date(9999, 12, 31)');
  check('date.nope', () => dateClass.getattr('nope'), null, [
    'AttributeError',
    "type object 'datetime.date' has no attribute 'nope'",
  ]);
});

test('SCHEDULE limits and end', () => {
  const start = new PyDateTime(2018, 9, 4, 14, 0);
  const end = new PyDateTime(2018, 9, 6);
  const r = F.SCHEDULE.call(['daily: 07:30, 21:00'], {start, end}) as Value[];
  assert.equal(
    r.map((x) => callAttr(x, 'strftime', ['%m-%d %H:%M'], null)),
    ['09-04 21:00', '09-05 07:30', '09-05 21:00'],
  );
  assert.equal(F.SCHEDULE.call(['daily: 07:30'], {start, count: 0n}), []);
  check('bad interval', () => F.SCHEDULE.call(['often: 1pm'], {start}), null, [
    'ValueError',
    "Not a valid interval 'often'",
  ]);
  check('bad slot', () => F.SCHEDULE.call(['daily: /15'], {start}), null, [
    'ValueError',
    "Invalid slot '/15' for unit 'days'",
  ]);
});

test('AVERAGE_WEIGHTED, SUMPRODUCT and the *A functions over tuples and records-like iterables', () => {
  assert.is(F.AVERAGE_WEIGHTED.call([[tuple(1n, 1n), tuple(3n, 3n)]], null), 2.5);
  assert.is(F.SUMPRODUCT.call([[1n, 2n, 3n], tuple(4n, 5n)], null), 14n);
  const iterable = {pyType: 'RecordSet', iter: () => [1n, 'x', true][Symbol.iterator]()};
  assert.is(F.SUM.call([iterable], null), 2n);
  assert.is(F.COUNTA.call([iterable], null), 3n);
  assert.is(F.MAXA.call([iterable], null), 1n);
});

test.run();
