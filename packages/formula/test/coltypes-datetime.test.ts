// The DateTime type (cells/coltypes/datetime.ts): epoch seconds read and shown in the column's zone.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {columnType, convertValue as conv} from '../src/cells/coltypes/index.js';
import {parseDateTime} from '../src/cells/coltypes/datetime.js';
import {localToEpoch, zoneOffsetSeconds} from '../src/cells/datetime.js';
import {formatMoment} from '../src/cells/moment-format.js';
import {makeTypedFormatter} from '../src/cells/types.js';

const US = {locale: 'en-US'};
const ctx = {settings: US, refLookup: () => null};

test('SQL type: DATETIME for the bare type only; the zone parsed from the type', () => {
  assert.equal([columnType('DateTime').sqlType, columnType('DateTime').sqlDefault], ['DATETIME', 'NULL']);
  assert.is(columnType('DateTime:UTC').sqlType, 'BLOB');
  assert.is(columnType('DateTime').tz, 'America/New_York');
  assert.is(columnType('DateTime:Europe/Paris').tz, 'Europe/Paris');
  assert.equal(makeTypedFormatter('DateTime:America/New_York')!(1707868800), ['D', 1707868800, 'America/New_York']);
});

test('encode/decode round trip (BLOB-declared: integers stay integers)', () => {
  const dt = columnType('DateTime:UTC');
  assert.is(dt.encoder('BLOB')(86400), 86400n);
  for (const v of [86400, 1.5, 'noon', null]) {
    const stored = dt.encoder('BLOB')(v);
    // SQLite gives an INTEGER back as a JS number.
    assert.equal(dt.decoder()(typeof stored === 'bigint' ? Number(stored) : stored), v, String(v));
  }
});

test('convert: ISO text read in the column zone unless it has an offset', () => {
  assert.is(conv('DateTime:UTC', '1970-01-02 12:00'), 129600);
  assert.is(conv('DateTime:America/New_York', '2024-02-14 00:00:00'), 1707868800 + 5 * 3600);
  assert.is(conv('DateTime:America/New_York', '2024-07-14T00:00:00Z'), 1720915200);
  assert.is(conv('DateTime:UTC', 'noon'), 'noon');
});

test('parse: a date in the column format, a flexible time, an optional zone', () => {
  assert.is(parseDateTime('2024-02-14 10:30', 'YYYY-MM-DD', 'UTC'), 1707906600);
  assert.is(parseDateTime('2024-02-14 10:30pm', 'YYYY-MM-DD', 'UTC'), 1707949800);
  assert.is(parseDateTime('2024-02-14 10:30', 'YYYY-MM-DD', 'America/New_York'), 1707906600 + 5 * 3600);
  assert.is(parseDateTime('2024-02-14 10:30 UTC', 'YYYY-MM-DD', 'America/New_York'), 1707906600);
  assert.is(parseDateTime('2024-02-14 10:30 +01:00', 'YYYY-MM-DD', 'UTC'), 1707906600 - 3600);
  assert.is(parseDateTime('2024-02-14', 'YYYY-MM-DD', 'UTC'), 1707868800);
  assert.is(parseDateTime('soon', 'YYYY-MM-DD', 'UTC'), null);
  assert.is(columnType('DateTime:Europe/Paris').parser({}, ctx)!('2024-02-14 10:30'), 1707906600 - 3600);
});

test('format: date and time formats; a bare DateTime is shown in UTC', () => {
  const format = (type: string, options: object, v: any) => columnType(type).formatter(options as any, US)(v);
  assert.is(format('DateTime:UTC', {}, 0), '1970-01-01 12:00am');
  assert.is(format('DateTime:UTC', {timeFormat: ''}, 0), '1970-01-01 ');
  assert.is(format('DateTime:America/New_York', {timeFormat: 'HH:mm z'}, 1707906600), '2024-02-14 05:30 EST');
  assert.is(format('DateTime', {timeFormat: 'HH:mm'}, 1707906600), '2024-02-14 10:30');
});

test('parse and format round trip in the column zone', () => {
  const options = {dateFormat: 'MM/DD/YYYY', timeFormat: 'h:mma'};
  for (const type of ['DateTime:America/New_York', 'DateTime:Asia/Kolkata', 'DateTime:UTC']) {
    const parse = columnType(type).parser(options, ctx)!;
    const format = columnType(type).formatter(options, US);
    for (const ts of [1707906600, 1720915200]) {
      assert.is(parse(format(ts)), ts, `${type} ${ts}`);
    }
  }
});

test('one zone offset for parsing and display (DST, half-hour zones, unknown zones, early years)', () => {
  assert.is(zoneOffsetSeconds('America/New_York', 1707906600_000), -5 * 3600);
  assert.is(zoneOffsetSeconds('America/New_York', 1720915200_000), -4 * 3600);
  assert.is(zoneOffsetSeconds('Asia/Kolkata', 0), 5.5 * 3600);
  assert.is(zoneOffsetSeconds('Not/AZone', 0), 0);
  const year50 = Date.UTC(2000, 5, 1) / 1000 - 1950 * 365.2425 * 86400;
  assert.is(zoneOffsetSeconds('UTC', year50 * 1000), 0);
  // Display inverts parsing.
  const wall = Date.UTC(2024, 2, 10, 12, 0) / 1000;
  assert.is(
    formatMoment(localToEpoch(wall, 'America/New_York') * 1000, 'America/New_York', 'YYYY-MM-DD HH:mm'),
    '2024-03-10 12:00',
  );
});

test('table schema: datetime with the Grist formats', () => {
  assert.equal(columnType('DateTime:UTC').schemaType({dateFormat: 'YYYY-MM-DD', timeFormat: 'HH:mm'}, 'en-US'), {
    type: 'datetime',
    format: 'any',
    gristFormat: 'YYYY-MM-DD HH:mm',
  });
});

test.run();
