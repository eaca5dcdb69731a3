// The shortcuts of type guessing (issue 43 §2) answer as the general paths do: plain decimals,
// dropping date formats past the failures a guess allows, and days of month without a Date.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {guessDateFormat, guessNumberFull, numberGuesser} from '../src/cells/parse.js';
import {parseWithFormat, parseWithFormatGeneral} from '../src/cells/coltypes/date.js';
import {validYmd} from '../src/cells/datetime.js';

/** A deterministic generator (tests repeat). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function digits(rand: () => number, n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += String(Math.floor(rand() * 10));
  return out;
}

test('plain decimals guess as parseNumber and its round trip do, in every kind of locale', () => {
  const rand = rng(43);
  const texts = [
    '0',
    '-0',
    '0.0',
    '-0.000',
    '10',
    '10.500',
    '007',
    '0.1',
    '.5',
    '5.',
    '-',
    '1e5',
    '1,000',
    '1.000,5',
    '123456789012345',
    '1234567890123456',
    '123456789012345.123456789012345',
    '0.000000000000001',
    '9007199254740993',
    '1.10',
    ' 12',
    '12 ',
    '+12',
    '(12)',
    '$12',
    '12%',
    '−12',
    '0.30000000000000004',
  ];
  for (let i = 0; i < 5000; i++) {
    const whole = rand() < 0.2 ? '0' : String(1 + Math.floor(rand() * 9)) + digits(rand, Math.floor(rand() * 16));
    const frac = rand() < 0.3 ? '' : `.${digits(rand, 1 + Math.floor(rand() * 16))}`;
    texts.push(`${rand() < 0.3 ? '-' : ''}${whole}${frac}`);
  }
  let plainCount = 0;
  for (const locale of ['en-US', 'de-DE', 'fr-FR', 'de-CH', 'en-IN']) {
    const settings = {locale};
    const guess = numberGuesser(settings);
    for (const t of texts) {
      assert.equal(guess(t), guessNumberFull(t, settings), `${locale}: ${t}`);
      if (locale === 'en-US' && /^-?\d+(\.\d+)?$/.test(t) && guess(t)) plainCount++;
    }
  }
  assert.ok(plainCount > 2000, 'most generated texts are lossless plain decimals');
});

test('a date format past the failures a guess allows is dropped: the guess is the same', () => {
  const rand = rng(7);
  const pool = [
    '2020-01-31',
    '2020-02-30',
    '01/02/2020',
    '31/01/2020',
    '1/2/20',
    '2020/01/02',
    '02.01.2020',
    '12 Jan 2020',
    'January 2nd, 2020',
    '2020-01-02 12:30',
    '2020-01-02T12:30:00Z',
    'name-12',
    '12',
    'hello',
    '3:30pm',
  ];
  for (let c = 0; c < 300; c++) {
    const n = 1 + Math.floor(rand() * 40);
    // Columns mostly of one kind, with a few others mixed in.
    const main = pool[Math.floor(rand() * pool.length)];
    const values = Array.from({length: n}, () => (rand() < 0.85 ? main : pool[Math.floor(rand() * pool.length)]));
    const maxUnparsed = n * 0.1;
    const full = guessDateFormat(values);
    const fast = guessDateFormat(values, maxUnparsed);
    const failures = full === null ? 0 : values.filter((v) => parseWithFormat(v, full, 'UTC') === null).length;
    // The guess takes the full count's format only when it fails no more than allowed.
    assert.is(fast, full !== null && failures <= maxUnparsed ? full : null, JSON.stringify(values));
  }
});

test("'YYYY-MM-DD' dates parse as the general format parser parses them", () => {
  const rand = rng(11);
  const texts = ['2020-02-29', '2021-02-29', '1900-02-29', '2000-02-29', '0000-01-01', '0099-12-31', '9999-12-31'];
  texts.push(
    '2020-1-01',
    '2020-01-1',
    ' 2020-01-01',
    '2020-01-01 ',
    '2020/01/01',
    '2020-00-10',
    '2020-13-01',
    '2020-01-32',
  );
  texts.push('2020-04-31', '２０２０-01-01', '2020-0a-01', '202a-01-01', '2020-01-01T00:00', '', '2020-01-0\u0661');
  for (let i = 0; i < 3000; i++) {
    const y = String(Math.floor(rand() * 10000)).padStart(4, '0');
    const m = String(Math.floor(rand() * 14)).padStart(2, '0');
    const d = String(Math.floor(rand() * 33)).padStart(2, '0');
    texts.push(`${y}-${m}-${d}`);
  }
  for (const tz of ['UTC', 'America/New_York', 'Asia/Kolkata']) {
    for (const t of texts) {
      assert.is(parseWithFormat(t, 'YYYY-MM-DD', tz), parseWithFormatGeneral(t, 'YYYY-MM-DD', tz), `${t} ${tz}`);
    }
  }
});

test('valid days of month are those of a Date, for every year Date holds and beyond', () => {
  const dateValid = (y: number, mo: number, d: number) =>
    !(mo < 1 || mo > 12 || d < 1) && d <= new Date(Date.UTC(y, mo, 0)).getUTCDate();
  const years = [
    0,
    1,
    4,
    99,
    100,
    1900,
    2000,
    2023,
    2024,
    -1,
    -4,
    270000,
    -270000,
    275760,
    -271821,
    300000,
    Number.NaN,
  ];
  for (const y of years) {
    for (const mo of [0, 1, 2, 4, 12, 13, 1.5, Number.NaN]) {
      for (const d of [0, 1, 27.5, 28, 29, 30, 31, 32, Number.NaN]) {
        assert.is(validYmd(y, mo, d), dateValid(y, mo, d), `${y}-${mo}-${d}`);
      }
    }
  }
});

test.run();
