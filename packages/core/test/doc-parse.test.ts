import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {guessColumn, parseChoiceList, parseDateStrict, parseDateTime, parseNumber} from '../src/doc/parse.js';

const US = {locale: 'en-US'};

test('numbers: currency, grouping, percent, parentheses (noparse off)', () => {
  assert.is(parseNumber('$4', US)?.value, 4);
  assert.is(parseNumber('12', US)?.value, 12);
  assert.is(parseNumber('(1,234.50)', US)?.value, -1234.5);
  assert.is(parseNumber('12%', US)?.value, 0.12);
  assert.is(parseNumber('-$5', US)?.value, -5);
  assert.is(parseNumber('1e3', US)?.value, 1000);
  assert.is(parseNumber('12,34', US), null, 'bad grouping');
  assert.is(parseNumber('abc', US), null);
  assert.is(parseNumber('', US), null);
  assert.is(parseNumber('0x10', US), null);
  assert.is(parseNumber('€7', {locale: 'fr-FR'})?.value, 7);
  assert.is(parseNumber('1 234,5', {locale: 'fr-FR'})?.value, 1234.5);
});

test('dates by the column format, separators and padding relaxed', () => {
  assert.is(parseDateStrict('2024-02-14', 'YYYY-MM-DD'), 1707868800);
  assert.is(parseDateStrict('2024/2/14', 'YYYY-MM-DD'), 1707868800);
  assert.is(parseDateStrict('02/14/2024', 'MM/DD/YYYY'), 1707868800);
  assert.is(parseDateStrict('14.02.2024', 'DD.MM.YYYY'), 1707868800);
  assert.is(parseDateStrict('Feb 14 2024', 'YYYY-MM-DD'), 1707868800, 'unambiguous fallback');
  assert.is(parseDateStrict('14/02/2024', 'YYYY-MM-DD'), null);
  assert.is(parseDateStrict('2024-02-30', 'YYYY-MM-DD'), null);
  assert.is(parseDateStrict('1707868800', 'YYYY-MM-DD'), 1707868800, 'timestamps are accepted');
});

test('date-times: date, flexible time, optional zone, in the column timezone', () => {
  assert.is(parseDateTime('2024-02-14 10:30', 'YYYY-MM-DD', 'UTC'), 1707906600);
  assert.is(parseDateTime('2024-02-14 10:30pm', 'YYYY-MM-DD', 'UTC'), 1707949800);
  assert.is(parseDateTime('2024-02-14 10:30', 'YYYY-MM-DD', 'America/New_York'), 1707906600 + 5 * 3600);
  assert.is(parseDateTime('2024-02-14 10:30 UTC', 'YYYY-MM-DD', 'America/New_York'), 1707906600);
  assert.is(parseDateTime('2024-02-14 10:30 +01:00', 'YYYY-MM-DD', 'UTC'), 1707906600 - 3600);
  assert.is(parseDateTime('2024-02-14', 'YYYY-MM-DD', 'UTC'), 1707868800);
  assert.is(parseDateTime('soon', 'YYYY-MM-DD', 'UTC'), null);
});

test('choice lists: JSON array or CSV, blanks dropped', () => {
  assert.equal(parseChoiceList('a, b\nc'), ['L', 'a', 'b', 'c']);
  assert.equal(parseChoiceList('["x", null, "", 2]'), ['L', 'x', '2']);
  assert.equal(parseChoiceList('"a,b",c'), ['L', 'a,b', 'c']);
  assert.is(parseChoiceList('  '), null);
  assert.is(parseChoiceList('[]'), null);
});

test('guessing the type of strings written to an empty column (SPEC 7.5)', () => {
  assert.equal(guessColumn(['1970-01-02'], US, 'UTC'), {
    type: 'Date', values: [86400],
    widgetOptions: {dateFormat: 'YYYY-MM-DD', timeFormat: '', isCustomDateFormat: false, isCustomTimeFormat: true},
  });
  const dt = guessColumn(['1970-01-02 12:00'], US, 'UTC')!;
  assert.is(dt.type, 'DateTime:UTC');
  assert.equal(dt.values, [129600]);
  assert.equal(guessColumn(['true', 'false'], US, 'UTC'), {type: 'Bool', values: [true, false]});
  assert.equal(guessColumn(['1.2', null], US, 'UTC'), {type: 'Numeric', values: [1.2, null]});
  assert.equal(guessColumn(['hello'], US, 'UTC'), {type: 'Text', values: ['hello']});
  assert.is(guessColumn([null, ''], US, 'UTC'), null);
  assert.is(guessColumn(['true', null], US, 'UTC')!.type, 'Text', 'Bool allows no blanks');
  assert.is(guessColumn(['007'], US, 'UTC')!.type, 'Text', 'a lossy parse is not a number');
  assert.equal(guessColumn(['$5', '$6.50'], US, 'UTC'), {
    type: 'Numeric', values: [5, 6.5], widgetOptions: {numMode: 'currency', decimals: 2},
  });
  // Up to 10% of values may stay unparsed (kept as text).
  const mostly = guessColumn([...Array.from({length: 10}, (_, i) => String(i + 1)), 'n/a'], US, 'UTC')!;
  assert.is(mostly.type, 'Numeric');
  assert.is(mostly.values[10], 'n/a');
});

test.run();
