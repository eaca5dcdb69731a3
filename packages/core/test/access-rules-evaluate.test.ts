// Compiled access-rule predicates: Grist's semantics (JavaScript equality and comparisons, `in` on
// lists and substrings, decoded cells, missing rows), after Grist's test/server/lib/ACLFormula.ts.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {
  compilePredicate,
  isNeedRowData,
  NEED_ROW_DATA,
  NeedRowData,
  PredicateEvalError,
  PredicateFormulaError,
  type PredicateInput,
  parsePredicateFormula,
  type RowView,
} from '../src/access/rules/index.js';

/** Parse as Grist's engine would, then compile the stored JSON. */
const compile = (formula: string) => compilePredicate(JSON.parse(parsePredicateFormula(formula)));

/** A row holding the given cells (Grist-encoded). */
const row = (cells: Record<string, unknown>): RowView => ({get: (colId) => cells[colId]});
/** A user with the given properties, on a null prototype as the access layer builds it. */
const U = (props: Record<string, unknown> = {}) => Object.assign(Object.create(null), props);
const run = (
  f: (i: PredicateInput) => boolean,
  user: Record<string, unknown>,
  rec?: RowView | null,
  newRec?: RowView,
) => f({user: U(user), rec, newRec});

function throwsEval(fn: () => unknown, pattern: RegExp) {
  try {
    fn();
  } catch (e) {
    assert.instance(e, PredicateEvalError);
    assert.match((e as Error).message, pattern);
    return e as PredicateEvalError;
  }
  assert.unreachable(`expected an error matching ${pattern}`);
  throw new Error('unreachable');
}

test('a comparison with a user property', () => {
  const f = compile("user.Email == 'X@'");
  assert.is(run(f, {Email: 'X@'}), true);
  assert.is(run(f, {Email: 'Y@'}), false);
  assert.is(run(f, {Email: 'X'}, row({Email: 'X@'})), false);
  assert.is(run(f, {Name: 'X@'}), false);
});

test('in and not in: list membership, missing values', () => {
  const inF = compile("user.Role in ('editors', 'owners')");
  const notInF = compile("user.Role not in ('editors', 'owners')");
  for (const [role, inside] of [
    ['editors', true],
    ['owners', true],
    ['viewers', false],
    [null, false],
    [undefined, false],
  ] as const) {
    const user = role === undefined ? {} : {Role: role};
    assert.is(run(inF, user), inside, String(role));
    assert.is(run(notInF, user), !inside, String(role));
  }
});

test('in on two strings is a substring test; on anything else false', () => {
  for (const op of ['in', 'not in']) {
    const f = compile(`user.Name ${op} 'FooBar'`);
    const yes = op === 'in';
    assert.is(run(f, {Name: 'FooBar'}), yes);
    assert.is(run(f, {Name: 'Foo'}), yes);
    assert.is(run(f, {Name: 'Bar'}), yes);
    assert.is(run(f, {Name: 'bar'}), !yes);
    assert.is(run(f, {Name: 'qux'}), !yes);
    assert.is(run(f, {Name: null}), !yes);
  }
  const f = compile('user.Email in rec.emails');
  const user = {Email: 'X@'};
  assert.is(run(f, user, row({emails: 'X@'})), true);
  assert.is(run(f, user, row({emails: 'AliceX@Y'})), true);
  assert.is(run(f, user, row({emails: 0})), false);
  assert.is(run(f, user, row({emails: 17.5})), false);
  assert.is(run(f, user, row({emails: null})), false);
  assert.is(run(f, user, row({unrelated: 'X@'})), false);
  // A list checks membership, not substrings.
  assert.is(run(f, user, row({emails: ['L', 'X@']})), true);
  assert.is(run(f, user, row({emails: ['L', 'AliceX@Y']})), false);
  const g = compile('(user.Email in rec.emails) == (user.Name in rec.emails)');
  assert.is(run(g, user, row({emails: null})), true);
  assert.is(run(g, user, row({emails: 'X@'})), false);
});

test('cells are decoded: an encoded list is never a list starting with "L"', () => {
  const f = compile('user.Email in rec.emails');
  const user = {Email: 'L'};
  assert.is(run(f, user, row({emails: ['L']})), false);
  assert.is(run(f, user, row({emails: ['L', 'X']})), false);
  assert.is(run(f, user, row({emails: ['L', 'L']})), true);
  assert.is(run(f, user, row({emails: []})), false);
  // An unknown type code decodes to an unknown value, not a list.
  assert.is(run(f, user, row({emails: ['A', 'L']})), false);
  // List literals are lists.
  assert.is(run(compile('user.Email in []'), user, row({})), false);
  assert.is(run(compile('user.Email in ["X"]'), user, row({})), false);
  assert.is(run(compile('user.Email in ["L"]'), user, row({})), true);
  // A user attribute's row is decoded too.
  const h = compile('"A" in user.Office.Rooms');
  assert.is(run(h, {Office: row({Rooms: null})}), false);
  assert.is(run(h, {Office: row({Rooms: ['L', 'A']})}), true);
  assert.is(run(h, {Office: row({Rooms: ['L', 'B']})}), false);
});

test('and/or; a missing rec or newRec throws NEED_ROW_DATA', () => {
  const f = compile("rec.office == 'Seattle' and user.email in ['sally@', 'xie@']");
  const e = throwsEval(() => run(f, {email: 'xie@'}), /^Missing row data 'rec'$/);
  assert.instance(e, NeedRowData);
  assert.is(e.code, NEED_ROW_DATA);
  assert.ok(isNeedRowData(e));
  throwsEval(() => run(f, {email: 'xie@'}, null), /Missing row data 'rec'/);
  assert.is(run(f, {email: 'xie@'}, row({})), false);
  assert.is(run(f, {email: 'xie@'}, row({office: null})), false);
  assert.is(run(f, {email: 'xie@home'}, row({office: 'Seattle'})), false);
  assert.is(run(f, {email: 'xie@'}, row({office: 'Seattle'})), true);
  assert.is(run(f, {email: 'sally@'}, row({office: 'Seattle'})), true);
  assert.is(run(f, {email: 'sally@'}, row({office: 'Chicago'})), false);
  assert.is(run(f, {}, row({})), false);
  const g = compile('user.Email=="X@" or user.Email is None');
  assert.is(run(g, {Email: 'X@'}), true);
  assert.is(run(g, {}), false, 'a missing property is undefined, which `is None` (=== null) is not');
  assert.is(run(g, {Email: null}), true);
  assert.is(run(g, {Email: 'Y@'}), false);
});

test('a combination of operators, short-circuiting as Grist does', () => {
  const f = compile(
    'user.IsAdmin or rec.assigned is None or (not newRec.HasDuplicates and rec.StatusIndex <= newRec.StatusIndex)',
  );
  assert.is(run(f, {IsAdmin: true}), true);
  assert.is(run(f, {IsAdmin: 17}), true);
  throwsEval(() => run(f, {IsAdmin: 0}), /Missing row data 'rec'/);
  throwsEval(() => run(f, {IsAdmin: 0}, row({assigned: true})), /Missing row data 'newRec'/);
  assert.is(run(f, {IsAdmin: 0}, row({}), row({})), false);
  assert.is(run(f, {IsAdmin: false}, row({assigned: 0}), row({})), false);
  assert.is(run(f, {IsAdmin: false}, row({assigned: null})), true);
  assert.is(run(f, {IsAdmin: false}, row({assigned: 'None'}), row({HasDuplicates: 1})), false);
  const both = (a: number, b: number, dup?: boolean) =>
    run(f, {IsAdmin: false}, row({assigned: 1, StatusIndex: a}), row({HasDuplicates: dup, StatusIndex: b}));
  assert.is(both(1, 1, false), true);
  assert.is(both(1, 17, false), true);
  assert.is(both(1, 17), true);
  assert.is(both(2, 1, false), false);
  assert.is(both(1, 17, true), false);
});

test('arithmetic and comparisons are JavaScript', () => {
  const f = compile(
    'rec.A <= rec.B + 1 and rec.A >= rec.B - 1 and rec.A < rec.C * 2.5 and rec.A > rec.C / 2.5 and rec.A % 2 != 0',
  );
  const at = (A: number, B: number, C: number) => run(f, {}, row({A, B, C}));
  assert.is(at(3, 3, 3), true);
  assert.is(at(3, 4, 3), true);
  assert.is(at(3, 2, 3), true);
  assert.is(at(3, 4.001, 3), false);
  assert.is(at(3, 1.999, 3), false);
  assert.is(at(6, 6, 6), false);
  assert.is(at(1.2, 1, 3), false);
  assert.is(at(1.3, 1, 3), true);
  assert.is(at(7.4, 7, 3), true);
  assert.is(at(7.5, 7, 3), false);
  // JavaScript, not Python: None < 5, True != 1, "1" != 1.
  assert.is(run(compile('rec.A < 5'), {}, row({A: null})), true);
  assert.is(run(compile('rec.A == 1'), {}, row({A: true})), false);
  assert.is(run(compile('rec.A == 1'), {}, row({A: '1'})), false);
  assert.is(run(compile("rec.A + 'x' == '1x'"), {}, row({A: 1})), true);
});

test('is and is not are strict (in)equality', () => {
  const f = compile('rec.A is True or rec.B is not False');
  const at = (cells: Record<string, unknown>) => run(f, {}, row(cells));
  assert.is(at({A: true}), true);
  assert.is(at({A: 2}), true);
  assert.is(at({A: 2, B: false}), false);
  assert.is(at({A: 2, B: null}), true);
  assert.is(at({A: null, B: true}), true);
  assert.is(at({A: null, B: false}), false);
  assert.is(at({A: null, B: 0}), true);
});

test('strings have .lower() and .upper() only', () => {
  let f = compile('rec.A.lower() == rec.B');
  const at = (A: unknown, B: unknown) => run(f, {}, row({A, B}));
  assert.is(at('foo', 'foo'), true);
  assert.is(at('FoO', 'foo'), true);
  assert.is(at('bar', 'foo'), false);
  assert.is(at(' foo ', 'foo'), false);
  assert.is(at('Foo', 'Foo'), false);
  f = compile('user.email.upper() in [rec.A.upper()]');
  assert.is(run(f, {email: 'Foo@'}, row({A: 'foo@'})), true);
  assert.is(run(f, {email: 'x1/Y2'}, row({A: 'X1/y2'})), true);
  assert.is(run(f, {email: ''}, row({A: 'foo'})), false);
});

test('calls of anything else fail with a clear error; unknown names when compiling', () => {
  const input = row({A: 'foo', B: 'foo'});
  throwsEval(() => run(compile('rec.lower() == rec.B'), {}, input), /^Not a function: 'rec.lower'$/);
  throwsEval(() => run(compile('rec.A.capitalize() == rec.B'), {}, input), /Not a function: 'rec.A.capitalize'/);
  throwsEval(() => run(compile('rec.A.lower() == rec.B'), {}, row({A: 1})), /Not a function: 'rec.A.lower'/);
  throwsEval(() => run(compile("rec.get('A') == rec.B"), {}, input), /Not a function: 'rec.get'/);
  // A function in a cell is never called.
  throwsEval(() => run(compile('rec.A() == rec.B'), {}, row({A: () => 1})), /Not a function: 'rec.A'/);
  throwsEval(() => run(compile("'x'.lower()()"), {}, input), /Not a function: 'value'/);
  for (const [formula, name] of [
    ['lower(rec.A) == rec.B', 'lower'],
    ['oldRec.B == 1', 'oldRec'],
    ['len(rec.A) > 1', 'len'],
    ['choice == 1', 'choice'],
  ]) {
    try {
      compile(formula);
      assert.unreachable(formula);
    } catch (e) {
      assert.instance(e, PredicateFormulaError);
      assert.is((e as PredicateFormulaError).message, `Unknown variable '${name}'`);
      assert.is((e as PredicateFormulaError).status, 400);
    }
  }
});

test('nested attributes; a missing value names the path', () => {
  const f = compile('user.office.city == "New York"');
  assert.is(run(f, {office: row({city: 'New York'})}), true);
  assert.is(run(f, {office: row({city: 'Boston'})}), false);
  assert.is(run(f, {office: row({city: null})}), false);
  throwsEval(() => run(f, {}), /^No value for 'user.office'$/);
  throwsEval(() => run(f, {office: null}), /No value for 'user.office'/);
  assert.is(run(f, {office: 5}), false);
  // A plain object's own properties only.
  assert.is(run(f, {office: {city: 'New York'}}), true);
});

test('only own properties are read: nothing from prototypes', () => {
  let f = compile('user.email.length == rec.A');
  assert.is(run(f, {email: 'Foo'}, row({A: 3})), false);
  assert.is(run(f, {email: 'Foo'}, row({A: undefined})), true);
  assert.is(run(f, {email: {}}, row({A: undefined})), true);
  assert.is(run(f, {email: []}, row({A: undefined})), true);
  assert.is(run(f, {email: 5}, row({A: undefined})), true);
  assert.is(run(f, {email: {length: 'x'}}, row({A: 'x'})), true);
  f = compile('user.email.toUpperCase.name == rec.A');
  throwsEval(() => run(f, {email: 'Foo'}, row({A: ''})), /No value for 'user.email.toUpperCase'/);
  // user.constructor, user.__proto__, user.hasOwnProperty: undefined, even on a plain object.
  for (const attr of ['constructor', '__proto__', 'hasOwnProperty', 'toString', 'valueOf']) {
    const g = compile(`user.${attr} is None or user.${attr} == rec.A`);
    assert.is(g({user: U(), rec: row({A: undefined})}), true, attr);
    assert.is(g({user: {} as Record<string, unknown>, rec: row({A: undefined})}), true, attr);
  }
  throwsEval(() => run(compile('user.constructor.name == 1'), {}), /No value for 'user.constructor'/);
  // A Grist dict cell is a null-prototype object: `__proto__` as a key is just a key.
  const h = compile('rec.D.__proto__ == 1');
  assert.is(run(h, {}, row({D: ['O', {['__proto__']: 1}]})), true);
  assert.is(run(h, {}, row({D: ['O', {}]})), false);
});

test('EDITOR, OWNER, VIEWER are the role names', () => {
  const f = compile('user.Access in [EDITOR, OWNER]');
  assert.is(run(f, {Access: 'editors'}), true);
  assert.is(run(f, {Access: 'owners'}), true);
  assert.is(run(f, {Access: 'viewers'}), false);
  assert.is(run(compile('user.Access == VIEWER'), {Access: 'viewers'}), true);
  // Comments are ignored.
  assert.is(run(compile('# memo\nuser.Access == OWNER # more'), {Access: 'owners'}), true);
});

test('dates compare by time; references and other cells decode to objects', () => {
  const f = compile('rec.date1 < rec.date2');
  for (let i = 0; i < 40; i++) {
    for (let j = 0; j < 40; j++) {
      const d1 = i * 1e10;
      const d2 = j * 1e10;
      assert.is(run(f, {}, row({date1: ['d', d1], date2: ['D', d2, 'UTC']})), d1 < d2);
    }
  }
  // Objects compare by identity, as in Grist: equal dates are not ==.
  assert.is(run(compile('rec.a == rec.b'), {}, row({a: ['d', 0], b: ['d', 0]})), false);
  assert.is(run(compile("rec.r == 'T[1]'"), {}, row({r: ['R', 'T', 1]})), false);
  assert.is(run(compile("rec.r + '' == 'T[1]'"), {}, row({r: ['R', 'T', 1]})), true);
});

test('bad trees and odd values: only typed errors', () => {
  for (const bad of [null, 5, 'x', [], [5], ['Nope'], ['Attr'], ['Call'], ['Name', 5], ['Eq', ['Const', 1]]]) {
    try {
      compilePredicate(bad)({user: U()});
    } catch (e) {
      assert.ok(e instanceof PredicateFormulaError || e instanceof PredicateEvalError, JSON.stringify(bad));
    }
  }
  // `+` on an object with no primitive value is JavaScript's TypeError, reported typed.
  throwsEval(() => run(compile('user + 1 == 1'), {}), /primitive/);
  // Keyword arguments compile and evaluate (the string methods ignore them).
  assert.is(run(compile("rec.A.lower(x=1) == 'a'"), {}, row({A: 'A'})), true);
});

test.run();
