/**
 * valibot at the edge, with Grist's error wording: `{"error": "Invalid payload", "details":
 * {"userError": "Error: body.records is missing"}}`.
 */
import * as v from 'valibot';
import { BadRequest } from '@gristlite/core';

function pathOf(prefix: string, issue: v.BaseIssue<unknown>): string {
  let out = prefix;
  for (const item of issue.path ?? []) {
    const key = (item as { key?: unknown }).key;
    out += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  }
  return out;
}

function describe(prefix: string, issue: v.BaseIssue<unknown>): string {
  const where = pathOf(prefix, issue);
  if (issue.input === undefined && issue.kind === 'schema') return `${where} is missing`;
  if (issue.message && !issue.message.startsWith('Invalid ')) return `${where} ${issue.message}`;
  // valibot says "Array"/"Object"; Grist's checker says "array"/"object".
  const expected = String(issue.expected ?? issue.type).replace(/^(Array|Object)$/, (m) => m.toLowerCase());
  return `${where} is not ${/^[aeiou]/i.test(String(expected)) ? 'an' : 'a'} ${expected}`;
}

/** Parses `input` with `schema` or throws 400 Invalid payload naming every problem. */
export function validate<S extends v.GenericSchema>(schema: S, input: unknown, prefix = 'body'): v.InferOutput<S> {
  const r = v.safeParse(schema, input);
  if (r.success) return r.output;
  const parts = [...new Set(r.issues.map((i) => describe(prefix, i)))];
  throw new BadRequest('Invalid payload', { userError: `Error: ${parts.join('; ')}` });
}
