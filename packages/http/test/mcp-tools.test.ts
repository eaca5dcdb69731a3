// Issue 42 §4: what the MCP tools are made of, checked without a server: every field of the
// POST /records/list body reaches read_records' query (D132), and the size bound keeps whole
// items within the byte limit with a note (D133).
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {bounded, fieldsNotPassedOn} from '../src/routes/mcp/tools.js';

test('read_records passes on every field of the POST /records/list body', () => {
  // A field added to the route's body (issue 40's `where`) fails this until readQuery passes it on.
  assert.equal(fieldsNotPassedOn(), [], 'wire these in readQuery (packages/http/src/routes/mcp/tools.ts)');
});

test('bounded: whole when it fits; else the leading items that fit, the note, and never more than the bound', () => {
  const items = Array.from({length: 40}, (_, i) => ({id: i + 1, text: 'x'.repeat(100)}));
  const note = {what: 'records', narrow: 'use filter'};
  const whole = bounded({maxRows: 40, maxBytes: 1_000_000}, 'records', items, {}, note);
  assert.equal(whole, {records: items});
  for (const maxBytes of [1024, 2048, 3000, 4096]) {
    const cut = bounded({maxRows: 40, maxBytes}, 'records', items, {statement: 'q'}, note);
    const text = JSON.stringify(cut);
    assert.ok(Buffer.byteLength(text) <= maxBytes, `${Buffer.byteLength(text)} <= ${maxBytes}`);
    const kept = (cut.records as unknown[]).length;
    assert.equal(cut.records, items.slice(0, kept));
    // One more item would not have fitted.
    const more = {...cut, records: items.slice(0, kept + 1)};
    assert.ok(Buffer.byteLength(JSON.stringify(more)) > maxBytes, `${kept + 1} items do not fit in ${maxBytes}`);
    assert.match(cut.truncated as string, new RegExp(`Only the first ${kept} records.*${maxBytes} bytes`));
    assert.is(cut.statement, 'q');
  }
  // The row bound: the first maxRows, and a note naming it.
  const rows = bounded({maxRows: 3, maxBytes: 1_000_000}, 'records', items, {}, note);
  assert.equal(rows.records, items.slice(0, 3));
  assert.match(rows.truncated as string, /more than 3 matched \(GRISTLITE_MCP_MAX_ROWS\)/);
});

test.run();
