import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {marshalDumps as dumps, marshalLoads as loads} from '../src/doc/index.js';

const hex = (h: string) => Buffer.from(h, 'hex');

// Bytes written by CPython's marshal (format versions 2 and 4), pinned literally.
const PYTHON: Array<[string, unknown]> = [
  ['4e', null],
  ['54', true],
  ['46', false],
  ['6905000000', 5],
  ['69f9ffffff', -7],
  ['e905000000', 5],
  ['6c03000000000000000004', 2 ** 40],
  ['67000000000000f83f', 1.5],
  ['e7000000000000f83f', 1.5],
  ['750600000068c3a96c6c6f', 'héllo'],
  ['f50600000068c3a96c6c6f', 'héllo'],
  ['73050000006279746573', 'bytes'],
  ['5b020000006901000000750100000061', [1, 'a']],
  ['db02000000e901000000da0161', [1, 'a']],
  ['2801000000750100000078', ['x']],
  ['a901da0178', ['x']],
  ['7b75010000006b5b01000000690100000030', {k: [1]}],
  ['fbda016b5b01000000e90100000030', {k: [1]}],
  // Version 4 back-references: the same interned string three times.
  ['5b03000000da016172000000007200000000', ['a', 'a', 'a']],
];

test('decodes what CPython marshal writes (versions 2 and 4)', () => {
  for (const [h, v] of PYTHON) {
    assert.equal(loads(hex(h)), v, h);
  }
});

test('decodes text floats, interned strings and string refs (version 1/2 codes)', () => {
  // 'f': length-prefixed decimal text.
  assert.is(loads(Buffer.concat([Buffer.from('f'), Buffer.from([4]), Buffer.from('2.25')])), 2.25);
  // 't' interns "ab", then 'R' 0 refers back to it.
  assert.equal(loads(hex('5b02000000' + '7402000000' + '6162' + '5200000000')), ['ab', 'ab']);
  // 'z' short ascii, ')' small tuple.
  assert.equal(loads(hex('2902' + '7a0178' + '7a0179')), ['x', 'y']);
});

test('encodes as version 2, like Grist: ints as i, other numbers as g, strings as u', () => {
  assert.is(dumps(5).toString('hex'), '6905000000');
  assert.is(dumps(1.5).toString('hex'), '67000000000000f83f');
  assert.is(dumps(2 ** 40).toString('hex'), '670000000000007042');
  assert.is(dumps('héllo').toString('hex'), '750600000068c3a96c6c6f');
  assert.is(dumps([1, 'a']).toString('hex'), '5b020000006901000000750100000061');
  assert.is(dumps({k: [1]}).toString('hex'), '7b75010000006b5b01000000690100000030');
  assert.is(dumps(null).toString('hex'), '4e');
  assert.is(dumps(true).toString('hex'), '54');
});

test('strings encode as their UTF-8 bytes on both sides of the short-ASCII path (64 units)', () => {
  const utf8 = (s: string) => {
    const b = Buffer.from(s, 'utf8');
    const head = Buffer.alloc(5);
    head.write('u', 0, 'latin1');
    head.writeInt32LE(b.length, 1);
    return Buffer.concat([head, b]).toString('hex');
  };
  const cases = ['', 'a', 'x'.repeat(63), 'x'.repeat(64), 'x'.repeat(65), 'x'.repeat(5000)];
  cases.push(`${'x'.repeat(63)}é`, `${'x'.repeat(64)}é`, 'é', '😀', 'a\ud800b', '\udc00', '\u007f\u0080');
  for (const s of cases) assert.is(dumps(s).toString('hex'), utf8(s), JSON.stringify(s.slice(0, 70)));
  // Inside containers too, where the buffer grows between writes.
  const many = Array.from({length: 300}, (_, i) => (i % 3 ? `name-${i}` : `näme-${i}`));
  const expected = Buffer.concat([hex('5b2c010000'), ...many.map((s) => hex(utf8(s)))]);
  assert.is(dumps(many).toString('hex'), expected.toString('hex'));
  assert.equal(loads(dumps(many)), many);
});

test('round-trips -0 and NaN as floats', () => {
  assert.ok(Object.is(loads(dumps(-0)), -0));
  assert.ok(Number.isNaN(loads(dumps(NaN)) as number));
  assert.equal(loads(dumps(['E', 'ZeroDivisionError'])), ['E', 'ZeroDivisionError']);
});

test('a value stored by Grist in TypeEncoding.grist decodes exactly', () => {
  // Types.AnyDate of row 24: ["d", 1593648000]
  assert.equal(loads(hex('5B02000000750100000064698023FD5E')), ['d', 1593648000]);
  // Types.AnyRef of row 24: ["R", "Types", 2]
  assert.equal(loads(hex('5B03000000750100000052750500000054797065736902000000')), ['R', 'Types', 2]);
});

test('truncated or unknown input throws', () => {
  assert.throws(() => loads(hex('69050000')), /truncated/);
  assert.throws(() => loads(hex('21')), /unsupported/);
});

test('a length beyond the bytes left is refused before anything is allocated (issue 37)', () => {
  // A list claiming 2^25 - 1 items in 5 bytes of a stored cell: new Array(n) took 256 MB first.
  const started = performance.now();
  for (let i = 0; i < 20; i++) {
    assert.throws(() => loads(hex('5bffffff01')), /truncated/);
    assert.throws(() => loads(hex('28ffffff01')), /truncated/);
  }
  assert.ok(performance.now() - started < 200, `took ${performance.now() - started} ms`);
  assert.throws(() => loads(hex('5bffffffff')), /negative length/);
});

test.run();
