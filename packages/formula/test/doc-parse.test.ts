import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {guessColumn} from '../src/cells/parse.js';

// Parsing of each type's text: coltypes-*.test.ts.

const US = {locale: 'en-US'};

test('guessing the type of strings written to an empty column (SPEC 7.5)', () => {
  assert.equal(guessColumn(['1970-01-02'], US, 'UTC'), {
    type: 'Date',
    values: [86400],
    widgetOptions: {dateFormat: 'YYYY-MM-DD', timeFormat: '', isCustomDateFormat: false, isCustomTimeFormat: true},
  });
  const dt = guessColumn(['1970-01-02 12:00'], US, 'UTC')!;
  assert.is(dt.type, 'DateTime:UTC');
  assert.equal(dt.values, [129600]);
  assert.equal(guessColumn(['true', 'false'], US, 'UTC'), {type: 'Bool', values: [true, false]});
  assert.equal(guessColumn(['1.2', null], US, 'UTC'), {type: 'Numeric', values: [1.2, null]});
  assert.equal(guessColumn(['hello'], US, 'UTC'), {type: 'Text', values: ['hello']});
  // Only numbers a float holds exactly (Grist formats the guess back and compares): 17 digits stay text.
  assert.equal(guessColumn(['12345678902345689'], US, 'UTC'), {type: 'Text', values: ['12345678902345689']});
  assert.equal(guessColumn(['123456789012345', '0.0000001'], US, 'UTC'), {
    type: 'Numeric',
    values: [123456789012345, 1e-7],
  });
  assert.is(guessColumn([null, ''], US, 'UTC'), null);
  assert.is(guessColumn(['true', null], US, 'UTC')!.type, 'Text', 'Bool allows no blanks');
  assert.is(guessColumn(['007'], US, 'UTC')!.type, 'Text', 'a lossy parse is not a number');
  assert.equal(guessColumn(['$5', '$6.50'], US, 'UTC'), {
    type: 'Numeric',
    values: [5, 6.5],
    widgetOptions: {numMode: 'currency', decimals: 2},
  });
  // Up to 10% of values may stay unparsed (kept as text).
  const mostly = guessColumn([...Array.from({length: 10}, (_, i) => String(i + 1)), 'n/a'], US, 'UTC')!;
  assert.is(mostly.type, 'Numeric');
  assert.is(mostly.values[10], 'n/a');
});

test.run();
