// SELF_HYPERLINK (issue 29): the function's URL forms as Grist's lookup.py builds them, the
// document URL it starts from (home/urls.ts), and the URL a write hands its formulas.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc} from '../src/doc/index.js';
import {gristFunctions, setDocUrl} from '@gristlite/formula';
import {PyException, type Kwargs, type Value} from '@gristlite/formula';
import {docPageUrl, docSlug, orgUrlName, publicUrlFromEnv} from '../src/home/urls.js';
import {tempPath} from './doc-helpers.js';

const F = gristFunctions;
const DOC_URL = 'https://docs.getgrist.com/sbaltsirg/Example';

/** SELF_HYPERLINK(...) with the document URL `url` (restored after). */
function call(url: string | null, args: Value[] = [], kwargs: Kwargs | null = null): Value {
  const previous = setDocUrl(url);
  try {
    return F.SELF_HYPERLINK.call(args, kwargs);
  } finally {
    setDocUrl(previous);
  }
}

function raises(fn: () => unknown, type: string, message: string): void {
  try {
    fn();
  } catch (e) {
    assert.instance(e, PyException);
    assert.is((e as PyException).type, type);
    assert.is((e as PyException).message, message);
    return;
  }
  assert.unreachable(`expected ${type}`);
}

test("SELF_HYPERLINK: the examples of Grist's documentation", () => {
  assert.is(call(DOC_URL), DOC_URL);
  assert.is(call(DOC_URL, [], {label: 'doc'}), `doc ${DOC_URL}`);
  assert.is(call(DOC_URL, [], {page: 2n}), `${DOC_URL}/p/2`);
  assert.is(call(DOC_URL, [], {LinkKey_Code: 'X1234'}), `${DOC_URL}?Code_=X1234`);
  assert.is(
    call(DOC_URL, [], {label: 'order', page: 3n, LinkKey_Code: 'X1234', LinkKey_Name: 'Bi Ngo'}),
    `order ${DOC_URL}/p/3?Code_=X1234&Name_=Bi+Ngo`,
  );
  raises(
    () => call(DOC_URL, [], {Linky_Link: 'Link'}),
    'TypeError',
    "unexpected keyword argument 'Linky_Link' (not of form LinkKey_NAME)",
  );
});

test('SELF_HYPERLINK: arguments as Python passes and formats them', () => {
  // Positional label and page; values formatted by str(), falsy ones left out.
  assert.is(call(DOC_URL, ['Open', 4n]), `Open ${DOC_URL}/p/4`);
  assert.is(call(DOC_URL, [12n, 2.5]), `12 ${DOC_URL}/p/2.5`);
  assert.is(call(DOC_URL, ['', 0n]), DOC_URL);
  assert.is(call(DOC_URL, [null, null]), DOC_URL);
  assert.is(call(DOC_URL, [true, 'x']), `True ${DOC_URL}/p/x`);
  // Link keys in sorted order, values by str() and quote_plus (UTF-8, space as +).
  assert.is(
    call(DOC_URL, [], {LinkKey_b: 1n, LinkKey_a: null, LinkKey_noise: '!! \'"{', LinkKey_x: 'café/ü'}),
    `${DOC_URL}?a_=None&b_=1&noise_=%21%21+%27%22%7B&x_=caf%C3%A9%2F%C3%BC`,
  );
  // A key made of more than one `LinkKey_` is not of the form.
  raises(
    () => call(DOC_URL, [], {LinkKey_a_LinkKey_b: 1n}),
    'TypeError',
    "unexpected keyword argument 'LinkKey_a_LinkKey_b' (not of form LinkKey_NAME)",
  );
  // A page holding a query and a fragment: the query is kept, link keys join it, the fragment stays last.
  assert.is(call(DOC_URL, [], {page: '2?x=1&blank=&y=a+b#frag', LinkKey_k: 'v'}), `${DOC_URL}/p/2?x=1&y=a+b&k_=v#frag`);
  raises(
    () => call(DOC_URL, ['a', 2n, 3n]),
    'TypeError',
    'SELF_HYPERLINK() takes from 0 to 2 positional arguments but 3 were given',
  );
  raises(
    () => call(DOC_URL, ['a'], {label: 'b'}),
    'TypeError',
    "SELF_HYPERLINK() got multiple values for argument 'label'",
  );
});

test('SELF_HYPERLINK: None while the URL is unknown, whatever the arguments (as Grist without DOC_URL)', () => {
  assert.is(call(null), null);
  assert.is(call(null, ['label', 2n]), null);
  assert.is(call(null, [], {Linky_Link: 'x'}), null);
});

test("the document's URL: Grist's forms, with org, urlId and slug", () => {
  const personal = {id: 3, domain: null, ownerId: 7};
  const team = {id: 4, domain: 'acme', ownerId: null};
  const doc = {id: 'sP73JZa3MBv1abcdefgh12', urlId: 'sP73JZa3MBv1', name: 'SelectByRefList'};
  // The value Grist stored in one of its fixtures (SelectByRefList.grist).
  assert.is(
    docPageUrl('http://localhost:47479', doc, personal),
    'http://localhost:47479/o/docs/sP73JZa3MBv1/SelectByRefList',
  );
  assert.is(
    docPageUrl('https://x.example/base/', doc, team),
    'https://x.example/base/o/acme/sP73JZa3MBv1/SelectByRefList',
  );
  // No urlId, a urlId of one's own, or a name without a slug: /doc/<key>.
  assert.is(docPageUrl('http://h', {...doc, urlId: null}, team), `http://h/o/acme/doc/${doc.id}`);
  assert.is(docPageUrl('http://h', {...doc, urlId: 'my-sales'}, team), 'http://h/o/acme/doc/my-sales');
  assert.is(docPageUrl('http://h', {...doc, urlId: 'sP73JZa3MBv'}, team), 'http://h/o/acme/doc/sP73JZa3MBv');
  assert.is(docPageUrl('http://h', {...doc, name: 'Ωμέγα'}, team), 'http://h/o/acme/doc/sP73JZa3MBv1');
  assert.equal(
    [orgUrlName(personal), orgUrlName({...personal, domain: 'docs-7'}), orgUrlName(team)],
    ['docs', 'docs', 'acme'],
  );
  assert.is(orgUrlName({id: 9, domain: null, ownerId: null}), 'o-9');
  assert.is(orgUrlName({id: 9, domain: 'docs-5', ownerId: 7}), 'docs-5');
});

test("slugs as Grist's (slugify, strict)", () => {
  assert.is(docSlug('My Doc'), 'My-Doc');
  assert.is(docSlug('  Sales & Marketing - 2024 '), 'Sales-and-Marketing-2024');
  assert.is(docSlug('Café Straße Ærø Łódź'), 'Cafe-Strasse-AEro-Lodz');
  assert.is(docSlug('50% off: a_b.c!'), '50percent-off-abc');
  assert.is(docSlug('---'), '');
});

test('the public URL setting: an absolute http(s) URL, trailing slash dropped; bad values stop start-up', () => {
  assert.is(publicUrlFromEnv({}), null);
  assert.is(publicUrlFromEnv({GRISTLITE_PUBLIC_URL: 'https://grist.example.com/'}), 'https://grist.example.com');
  assert.is(publicUrlFromEnv({GRISTLITE_PUBLIC_URL: 'http://h:8080/sub/'}), 'http://h:8080/sub');
  assert.is(publicUrlFromEnv({APP_HOME_URL: 'https://grist.example.com'}), 'https://grist.example.com');
  assert.is(
    publicUrlFromEnv({GRISTLITE_PUBLIC_URL: 'https://a.example', APP_HOME_URL: 'https://b.example'}),
    'https://a.example',
  );
  for (const bad of ['grist.example.com', 'ftp://x', 'https://x/?a=1', 'https://x/#f', 'https://u:p@x']) {
    assert.throws(() => publicUrlFromEnv({GRISTLITE_PUBLIC_URL: bad}), /GRISTLITE_PUBLIC_URL must be an absolute http/);
  }
});

test("a write's formulas see the URL its caller gave (as()); others see None", () => {
  const doc = GristDoc.create(tempPath());
  try {
    doc.addTables([
      {
        id: 'Links',
        columns: [
          {id: 'Code', fields: {type: 'Text', isFormula: false}},
          {
            id: 'Link',
            fields: {type: 'Text', isFormula: true, formula: 'SELF_HYPERLINK(label=$Code, LinkKey_Code=$Code)'},
          },
        ],
      },
    ]);
    const url = 'https://h.example/o/docs/abcdefghijkl/Links';
    doc.as(null, null, {docUrl: url}).addRecords('Links', [{Code: 'A1'}]);
    doc.addRecords('Links', [{Code: 'B2'}]);
    assert.equal(doc.fetchColumns('Links').Link, [`A1 ${url}?Code_=A1`, null]);
    // The URL is the write's only: none is left behind for the next one.
    doc.updateRecords('Links', [{id: 1, fields: {Code: 'C3'}}]);
    assert.equal(doc.fetchColumns('Links').Link, [null, null]);
  } finally {
    doc.close();
  }
});

test.run();
