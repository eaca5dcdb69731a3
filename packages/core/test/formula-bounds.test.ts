// Issue 37: a number a formula computes (a repeat factor, a width, a precision, the length of a
// range) must be checked against a bound before it sizes a string, a list or a loop: the engine
// runs in the server's process, so an unchecked one holds the event loop or ends the process.
// Expected errors are CPython 3.11's where CPython refuses the size itself (OverflowError, ValueError),
// and the budget's MemoryError where CPython would try to allocate (budget.ts, docs/formulas.md).
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {type ColumnSpec, FormulaEngine} from '@gristlite/formula';
import {GristDoc} from '../src/doc/index.js';
import {tempPath} from './doc-helpers.js';
import {pyrepr} from './formula-helpers.js';

const INDEX = "!OverflowError: cannot fit 'int' into an index-sized integer";
const SSIZE = '!OverflowError: Python int too large to convert to C ssize_t';
const C_INT = '!OverflowError: Python int too large to convert to C int';
const MEMORY = /^!MemoryError: /;

/** Each formula answers within this many ms (the fuzz test's bound on one request is 250). */
const QUICK_MS = 100;

/**
 * Milliseconds of CPU the process spends in `fn`: a size computed before it is refused takes
 * seconds of CPU, while a loaded machine only stretches the wall clock (helpers' builds at load 8
 * failed the wall-clock version of these checks).
 */
function cpuMs(fn: () => void): number {
  const before = process.cpuUsage();
  fn();
  const {user, system} = process.cpuUsage(before);
  return (user + system) / 1000;
}

const CASES: Array<[string, string | RegExp]> = [
  // Sequence repetition: the factor is an index-sized integer first, a size second.
  ["'x' * 10**20", INDEX],
  ["'x' * -10**20", INDEX],
  ["'' * 10**20", INDEX],
  ['10**20 * "x"', INDEX],
  ['[0] * 10**20', INDEX],
  ['(0,) * 10**20', INDEX],
  ["'x' * 10**9", MEMORY],
  ['[0] * 10**9', MEMORY],
  ['len([0] * 500000 * 2)', '1000000'],
  // Widths of str methods.
  ["'x'.zfill(10**20)", SSIZE],
  ["'x'.ljust(10**20)", SSIZE],
  ["'x'.rjust(-10**20)", SSIZE],
  ["'x'.center(10**20)", SSIZE],
  ["'x'.zfill(10**9)", MEMORY],
  ["'x'.ljust(10**9)", MEMORY],
  ["'x'.rjust(10**9, '-')", MEMORY],
  ["'x'.center(10**9)", MEMORY],
  ["len('x'.center(1000))", '1000'],
  ["'x'.expandtabs(2**31)", C_INT],
  ["'\\tx'.expandtabs(10**9)", MEMORY],
  ["'a\\tb'.expandtabs(4)", "'a   b'"],
  // Format specs: f-strings, str.format, format().
  ['f"{1:>999999999}"', MEMORY],
  ['f"{1:>99999999999999999999}"', '!ValueError: Too many decimal digits in format string'],
  ["'{:>999999999}'.format('x')", MEMORY],
  ["format(1, '0=999999999')", MEMORY],
  ["format(1, ',>999999999')", MEMORY],
  ["format(1.5, '.999999999f')", MEMORY],
  ["format(1.5, '.2147483648f')", '!ValueError: precision too big'],
  ["format(1.5, '.99999999999g')", '!ValueError: precision too big'],
  ["format(1.5, '.999999999%')", MEMORY],
  ["format('abc', '.99999999999')", "'abc'"],
  ["format(1.5, '>8.2f')", "'    1.50'"],
  // The % operator.
  ["'%999999999d' % 1", MEMORY],
  ["'%99999999999999999999d' % 1", '!ValueError: width too big'],
  ["'%.99999999999f' % 1.5", '!ValueError: precision too big'],
  ["'%.999999999f' % 1.5", MEMORY],
  ["'%*d' % (10**20, 1)", SSIZE],
  ["'%*d' % (999999999, 1)", MEMORY],
  ["'%.*f' % (2**31, 1.5)", C_INT],
  ["'%5.1f|%-4d|%04d' % (1.25, 7, 3)", "'  1.2|7   |0003'"],
  // A range's length is known: materialising a huge one fails at once, not after the loop budget.
  ['list(range(10**9))', MEMORY],
  ['tuple(range(10**12))', MEMORY],
  ['sorted(range(10**12))', MEMORY],
  ['len(range(10**20))', SSIZE],
  ['len(range(10**12))', '1000000000000'],
  ['range(10**20)[5]', '5'],
  // Ints: a product or power past MAX_INT_BITS (ops.ts) is refused before V8 computes it; int()
  // of a long decimal text has CPython 3.11's 4300-digit limit (parsing is quadratic).
  ['x = 3\nfor i in range(40): x = x ** 2\nreturn 1', /^!MemoryError: integer result too large/],
  ['x = 10\nfor i in range(30): x = x * x\nreturn 1', /^!MemoryError: integer result too large/],
  ['(10**(10**5)) ** 30', /^!MemoryError: integer result too large/],
  ['len(str((10**100000) ** 3))', '300001'],
  ['2**100000 > 0', 'True'],
  [
    'int("9" * 100000)',
    '!ValueError: Exceeds the limit (4300 digits) for integer string conversion: value has 100000 digits; use sys.set_int_max_str_digits() to increase the limit',
  ],
  ['int("9" * 4300) > 0', 'True'],
  ['import math\nmath.factorial(10**6)', /^!MemoryError: integer result too large/],
  ['import math\nmath.comb(10**6, 5 * 10**5)', /^!MemoryError: integer result too large/],
  ['import math\nmath.perm(10**6)', /^!MemoryError: integer result too large/],
  ['import math\nlen(str(math.factorial(2000)))', '5736'],
  ['import math\nmath.comb(10**6, 2)', '499999500000'],
  ['dict.fromkeys(range(10**8))', MEMORY],
  ['len(dict.fromkeys(range(10)))', '10'],
  // round() to more digits than an int has: 0, without computing 10 ** (10 ** 20).
  ['round(15, -10**20)', '0'],
  ['round(1234, -2)', '1200'],
  // itertools counts.
  ['import itertools\nlist(itertools.repeat(1, 10**9))', MEMORY],
  ['import itertools\nlist(itertools.product(range(1000), repeat=4))', MEMORY],
  ['import itertools\nlen(list(itertools.product(range(3), repeat=2)))', '9'],
  ['import itertools\nlist(itertools.repeat("a", 3))', "['a', 'a', 'a']"],
  ['import itertools\nlist(itertools.repeat(1, 10**20))', SSIZE],
  // A step below 1 looped for ever.
  [
    'import itertools\nlist(itertools.islice([1, 2, 3], 0, 10, 0))',
    '!ValueError: Step for islice() must be a positive integer or None.',
  ],
  [
    'import itertools\nlist(itertools.islice([1, 2, 3], 0, 10, -1))',
    '!ValueError: Step for islice() must be a positive integer or None.',
  ],
  // repr() of a list holding one list 10^4 times: 10^8 items of text.
  ['len(str([[0] * 10**4] * 10**4))', MEMORY],
  ['x = [0]\nfor i in range(40): x = [x, x]\nreturn len(repr(x))', MEMORY],
];

test('sizes taken from formula values are checked before anything is allocated', () => {
  const failures: string[] = [];
  for (const [src, expected] of CASES) {
    let got = '';
    let ms = Infinity;
    // The faster of two runs: a garbage collection of the case before is not this case's time.
    for (let run = 0; run < 2; run++) {
      const spent = cpuMs(() => {
        try {
          got = pyrepr(src);
        } catch (e) {
          got = `JS ${(e as Error).name}: ${(e as Error).message}`;
        }
      });
      ms = Math.min(ms, spent);
    }
    const ok = typeof expected === 'string' ? got === expected : expected.test(got);
    if (!ok) failures.push(`${JSON.stringify(src)}\n  expected ${String(expected)}\n  got      ${got.slice(0, 120)}`);
    else if (ms > QUICK_MS) failures.push(`${JSON.stringify(src)} took ${ms.toFixed(0)} ms`);
  }
  assert.is(failures.join('\n'), '');
});

const data = (colId: string, type: string): ColumnSpec => ({colId, type, isFormula: false, formula: ''});
const formula = (colId: string, text: string): ColumnSpec => ({colId, type: 'Any', isFormula: true, formula: text});

test('a result is bounded when it is stored, shared parts counted each time they are stored', () => {
  let e = new FormulaEngine();
  let ms = Infinity;
  // The faster of two engines' runs (as the cases above): process CPU time counts the garbage
  // collector's threads, and a collection of earlier tests' heap landed in one run (0.17-0.2 s
  // alone, 1.1-1.3 s measured inside the whole core suite).
  for (let run = 0; run < 2; run++) {
    e = new FormulaEngine();
    e.loadTable({tableId: 'T', columns: [data('N', 'Numeric')]}, [1], {N: [1]});
    // 10^4 references to one list of 10^4 items: small to build, 10^8 items as a cell.
    e.addColumn('T', formula('Grid', '[[0] * 10**4] * 10**4'));
    // Each level doubles what encoding it would write: 2^40 items from 40 small lists.
    e.addColumn('T', formula('Doubling', 'x = [0]\nfor i in range(40): x = [x, x]\nreturn x'));
    e.addColumn('T', formula('Self', 'x = []\nx.append(x)\nreturn x'));
    e.addColumn('T', formula('Fine', '[[0] * 3] * 2'));
    const engine = e;
    ms = Math.min(
      ms,
      cpuMs(() => engine.recalc()),
    );
  }
  assert.ok(ms < 1000, `took ${ms} ms of CPU`);
  for (const col of ['Grid', 'Doubling']) {
    const cell = e.getCell('T', col, 1) as unknown[];
    assert.equal(cell.slice(0, 2), ['E', 'MemoryError'], col);
  }
  assert.equal((e.getCell('T', 'Self', 1) as unknown[]).slice(0, 2), ['E', 'RecursionError']);
  assert.equal(e.getCell('T', 'Fine', 1), ['L', ['L', 0, 0, 0], ['L', 0, 0, 0]]);
});

test("Grist's functions: ROUND/FIXED/DOLLAR places, REPT's own bound", () => {
  const e = new FormulaEngine();
  e.loadTable({tableId: 'T', columns: [data('N', 'Numeric')]}, [1], {N: [1]});
  const cases: Array<[string, unknown]> = [
    // ROUND computes 10 ** places as Grist's does: past a float's range that is Grist's OverflowError,
    // raised here before 10 ** (10 ** 9) is computed (38 s before).
    ['FIXED(1, 10**9)', 'OverflowError'],
    ['DOLLAR(1, 10**9)', 'OverflowError'],
    ['ROUND(1.5, 10**9)', 'OverflowError'],
    ['ROUNDDOWN(1.5, -10**9)', 'OverflowError'],
    ['FIXED(1.25, 1)', '1.3'],
    ['len(FIXED(1.25, 150))', 152],
    ['REPT("x", 10**9)', 'ValueError'],
    ['len(REPT("ab", 100))', 200],
  ];
  cases.forEach(([f], i) => e.addColumn('T', formula(`C${i}`, f)));
  const ms = cpuMs(() => e.recalc());
  assert.ok(ms < 500, `took ${ms} ms of CPU`);
  cases.forEach(([f, expected], i) => {
    const cell = e.getCell('T', `C${i}`, 1);
    assert.equal(Array.isArray(cell) && cell[0] === 'E' ? cell[1] : cell, expected, f);
  });
});

test('the results of one recalculation together stay within maxRecalcSize', () => {
  const e = new FormulaEngine({budget: {maxRecalcSize: 2_500_000}});
  const rows = [1, 2, 3, 4, 5];
  e.loadTable({tableId: 'T', columns: [data('N', 'Numeric')]}, rows, {N: rows});
  e.addColumn('T', {colId: 'S', type: 'Text', isFormula: true, formula: '"x" * 1000000'});
  e.recalc();
  const cells = rows.map((r) => e.getCell('T', 'S', r));
  assert.equal(
    cells.map((c) => (typeof c === 'string' ? c.length : (c as unknown[]).slice(0, 2))),
    [1000000, 1000000, ['E', 'MemoryError'], ['E', 'MemoryError'], ['E', 'MemoryError']],
  );
});

test('a document survives a formula column whose every cell is as large as the budget allows', () => {
  // 60 rows of 10 MB strings is 600 MB of results: the recalculation's total stops it.
  const doc = GristDoc.create(tempPath());
  doc.addTables([{id: 'T', columns: [{id: 'N', fields: {type: 'Numeric', isFormula: false}}]}]);
  doc.addRecords(
    'T',
    Array.from({length: 60}, (_, i) => ({N: i})),
  );
  doc.addColumns('T', [{id: 'Big', fields: {type: 'Text', isFormula: true, formula: '"x" * 10**7'}}]);
  const cells = doc.fetchColumns('T').Big as unknown[];
  const errors = cells.filter((c) => Array.isArray(c) && c[0] === 'E' && c[1] === 'MemoryError').length;
  assert.ok(errors >= 40, `${errors} cells refused`);
  doc.close();
});

test.run();
