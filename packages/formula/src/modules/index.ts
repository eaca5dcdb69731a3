/**
 * The Python modules formulas can import (`import datetime`, `import re`, `from math import sqrt`).
 * Grist's sandbox offers the whole standard library; gristlite offers these, and an import of
 * anything else gives ImportError.
 */
import type {PyObject} from '../values.js';
import {
  MAXYEAR,
  MINYEAR,
  UTC,
  dateClass,
  datetimeClass,
  timeClass,
  timedeltaClass,
  timezoneClass,
  tzinfoClass,
} from '../datetime.js';
import {mathModule} from './math.js';
import {reModule} from './re.js';
import {PyModule, functoolsModule, itertoolsModule, jsonModule, stringModule, timeModule} from './small.js';

export const datetimeModule = new PyModule('datetime', {
  date: dateClass,
  datetime: datetimeClass,
  time: timeClass,
  timedelta: timedeltaClass,
  timezone: timezoneClass,
  tzinfo: tzinfoClass,
  UTC,
  MINYEAR: BigInt(MINYEAR),
  MAXYEAR: BigInt(MAXYEAR),
});

export const modules: Record<string, PyObject> = {
  datetime: datetimeModule,
  math: mathModule,
  re: reModule,
  time: timeModule,
  json: jsonModule,
  string: stringModule,
  itertools: itertoolsModule,
  functools: functoolsModule,
};

export {PyModule};
