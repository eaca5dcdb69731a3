// SCHEDULE beyond its doctests: the cases of grist-core's functions/test_schedule.py, written for
// gristlite's API (the document zone is America/New_York, as there).
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {F, callAttr} from './formula-lib-helpers.js';
import {PyException, type Value} from '../src/values.js';
import {PyDate, PyDateTime, tzinfoFor} from '../src/datetime.js';

const iso = (xs: Value) => (xs as Value[]).map((d) => callAttr(d, 'isoformat', [' '], null));
const sched = (spec: string, kw: Record<string, Value>) => F.SCHEDULE.call([spec], kw);

function raises(spec: string, pattern: RegExp): void {
  assert.throws(
    () => sched(spec, {start: new PyDateTime(2018, 1, 1)}),
    (e: unknown) => e instanceof PyException && e.type === 'ValueError' && pattern.test(e.message),
    spec,
  );
}

test('SCHEDULE with start and end (dates, datetimes or text)', () => {
  assert.equal(
    iso(sched('1-week: +1d 9:30am, +4d 3:30pm', {start: new PyDateTime(2018, 1, 1), end: new PyDateTime(2018, 1, 31)})),
    [
      '2018-01-01 09:30:00-05:00',
      '2018-01-04 15:30:00-05:00',
      '2018-01-08 09:30:00-05:00',
      '2018-01-11 15:30:00-05:00',
      '2018-01-15 09:30:00-05:00',
      '2018-01-18 15:30:00-05:00',
      '2018-01-22 09:30:00-05:00',
      '2018-01-25 15:30:00-05:00',
      '2018-01-29 09:30:00-05:00',
    ],
  );
  const want = ['2018-01-01 12:00:00-05:00', '2018-04-01 12:00:00-04:00'];
  assert.equal(
    iso(sched('3-month: +0d 12pm', {start: new PyDateTime(2018, 1, 1), end: new PyDateTime(2018, 6, 30)})),
    want,
  );
  assert.equal(iso(sched('3-month: +0d 12pm', {start: new PyDate(2018, 1, 1), end: new PyDate(2018, 6, 30)})), want);
  assert.equal(iso(sched('3-month: +0d 12pm', {start: '2018-01-01', end: '2018-06-30'})), want);
});

test('the zone of start is the zone of the results', () => {
  assert.equal(
    iso(
      sched('daily: 9am', {count: 4n, start: new PyDateTime(2018, 2, 14, 0, 0, 0, 0, tzinfoFor('America/New_York'))}),
    ),
    [
      '2018-02-14 09:00:00-05:00',
      '2018-02-15 09:00:00-05:00',
      '2018-02-16 09:00:00-05:00',
      '2018-02-17 09:00:00-05:00',
    ],
  );
  assert.equal(
    iso(
      sched('daily: 9am, 4:30pm', {
        count: 4n,
        start: new PyDateTime(2018, 2, 14, 9, 0, 0, 0, tzinfoFor('America/Los_Angeles')),
      }),
    ),
    [
      '2018-02-14 09:00:00-08:00',
      '2018-02-14 16:30:00-08:00',
      '2018-02-15 09:00:00-08:00',
      '2018-02-15 16:30:00-08:00',
    ],
  );
  assert.equal(
    iso(sched('daily: 9am, 4:30pm', {count: 4n, start: new PyDateTime(2018, 2, 14, 17, 0, 0, 0, tzinfoFor('UTC'))})),
    [
      '2018-02-15 09:00:00+00:00',
      '2018-02-15 16:30:00+00:00',
      '2018-02-16 09:00:00+00:00',
      '2018-02-16 16:30:00+00:00',
    ],
  );
  assert.equal(iso(sched('weekly: Mo 10:30am, We 10:30pm', {start: new PyDateTime(2018, 9, 23), count: 4n})), [
    '2018-09-24 10:30:00-04:00',
    '2018-09-26 22:30:00-04:00',
    '2018-10-01 10:30:00-04:00',
    '2018-10-03 22:30:00-04:00',
  ]);
});

test('intervals: aliases, N-unit with singular or plural units', () => {
  const start = new PyDateTime(2018, 9, 4, 14, 38, 11);
  // Slots count from the start of the unit containing `start` (14:00 here), then every interval.
  assert.equal(iso(sched('2-hours: :00', {start, count: 2n})), [
    '2018-09-04 16:00:00-04:00',
    '2018-09-04 18:00:00-04:00',
  ]);
  assert.equal(iso(sched('10-minute: +0S', {start, count: 2n})), [
    '2018-09-04 14:48:00-04:00',
    '2018-09-04 14:58:00-04:00',
  ]);
  assert.equal(iso(sched('annual: Feb-29', {start, count: 2n})), [
    '2019-03-01 00:00:00-05:00',
    '2020-02-29 00:00:00-05:00',
  ]);
  raises('often: 9am', /^Not a valid interval 'often'$/);
  raises('3-fortnights: +1d', /^Unknown unit 'fortnights' in interval '3-fortnights'$/);
  raises('daily 9am', /^schedule must have the form INTERVAL: SLOTS, \.\.\.$/);
});

test('slot errors as Grist words them', () => {
  raises('weekly: +1d +2d', /Duplicate unit/);
  raises('daily: 9:30am +2H', /Duplicate unit/);
  raises('monthly: /15 +1d', /Duplicate unit/);
  raises('annual: Feb-1 12:30pm +20M', /Duplicate unit/);
  raises('weekly: Feb-1', /Invalid slot.*for unit/);
  raises('monthly: Monday', /Invalid slot.*for unit/);
  raises('hourly: 4/15', /Invalid slot.*for unit/);
  raises('annual: /1', /Invalid slot.*for unit/);
  raises('weekly: Feb:1', /Invalid slot/);
  raises('monthly: /1d', /Invalid slot/);
  raises('hourly: 10', /Invalid slot/);
  raises('annual: H1', /Invalid slot/);
  raises('annual: februarium-1', /Unknown month/);
  raises('weekly: snu', /Unknown day of the week/);
  raises('hourly: +1t', /Unknown unit/);
  raises('daily: 9am,', /At least one slot must be specified/);
});

test.run();
