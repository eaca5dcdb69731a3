/**
 * Beyond Grist (issue 42 §3, docs/imports.md): `POST /api/docs/:docId/tables/:tableId/import`, a
 * CSV/TSV, XLSX or JSON file (multipart `upload`) imported into an existing table: appended,
 * added-or-updated on key columns, or replacing its rows, with a column mapping, parse options,
 * and a dry run. Editors, as the record writes it amounts to; access rules check the write.
 */
import {join} from 'node:path';
import {
  BadRequest,
  importFormat,
  importIntoTable,
  type ImportMode,
  IMPORT_MODES,
  shownValue,
} from '@gristlite/core/internal';
import {isMultipart} from '../multipart.js';
import type {Route} from '../route.js';
import type {RequestContext} from '../types.js';
import {docRoute} from './doc-common.js';

/** The options of the import: form fields, else query parameters of the same name. */
function option(ctx: RequestContext, fields: Map<string, string>, name: string): string | undefined {
  return fields.get(name) ?? ctx.query.get(name) ?? undefined;
}

function jsonOption(value: string | undefined, name: string): unknown {
  if (value === undefined || value === '') return undefined;
  try {
    return JSON.parse(value);
  } catch {
    throw new BadRequest(`${name} must be JSON: ${shownValue(value.slice(0, 100))}`);
  }
}

function boolOption(value: string | undefined, name: string): boolean {
  if (value === undefined || value === '') return false;
  const v = value.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new BadRequest(`${name} must be true or false: ${shownValue(value)}`);
}

function keysOption(value: string | undefined): string[] | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed = value.trim().startsWith('[') ? jsonOption(value, 'keys') : value.split(',').map((k) => k.trim());
  if (!Array.isArray(parsed) || !parsed.length || parsed.some((k) => typeof k !== 'string' || !k)) {
    throw new BadRequest('keys must be a list of column ids (JSON, or separated by commas)');
  }
  return parsed as string[];
}

function mappingOption(value: string | undefined): Record<string, string | null> | undefined {
  const parsed = jsonOption(value, 'mapping');
  if (parsed === undefined) return undefined;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new BadRequest('mapping must be a JSON object: {"file column": "column id" or null}');
  }
  for (const [k, v] of Object.entries(parsed)) {
    if (v !== null && typeof v !== 'string') throw new BadRequest(`mapping of "${k}" must be a column id or null`);
  }
  return parsed as Record<string, string | null>;
}

function parseOptionsOption(ctx: RequestContext, fields: Map<string, string>) {
  const parsed = jsonOption(option(ctx, fields, 'parseOptions'), 'parseOptions') ?? {};
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new BadRequest('parseOptions must be a JSON object');
  }
  const p = parsed as Record<string, unknown>;
  const out: {delimiter?: string; encoding?: string; include_col_names_as_headers?: boolean; sheet?: string} = {};
  for (const [k, v] of Object.entries(p)) {
    if (k === 'delimiter' || k === 'encoding' || k === 'sheet') {
      if (typeof v !== 'string' || !v) throw new BadRequest(`parseOptions.${k} must be a non-empty string`);
      if (k === 'delimiter' && v.length !== 1) throw new BadRequest('parseOptions.delimiter must be one character');
      out[k] = v;
    } else if (k === 'include_col_names_as_headers') {
      if (typeof v !== 'boolean') throw new BadRequest(`parseOptions.${k} must be true or false`);
      out[k] = v;
    } else {
      throw new BadRequest(
        `parseOptions.${k} is not an option (delimiter, encoding, include_col_names_as_headers, sheet)`,
      );
    }
  }
  const sheet = option(ctx, fields, 'sheet');
  if (sheet) out.sheet = sheet;
  return out;
}

export const tableImportRoutes: Route[] = [
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/tables/:tableId/import',
    tag: 'records',
    upload: true,
    summary:
      'Beyond Grist: import a CSV/TSV, XLSX or JSON file (multipart "upload") into an existing table: mode append, upsert (keys) or replace; mapping, parseOptions, dryRun',
    uploadFields: {
      mode: {type: 'string', enum: ['append', 'upsert', 'replace'], description: 'Default append'},
      keys: {type: 'string', description: 'upsert: the key columns, JSON list or separated by commas'},
      mapping: {
        type: 'string',
        description:
          'JSON object: file column (header, or letter A, B, ... without one) -> column id, or null to skip; default: matched by id or label',
      },
      parseOptions: {
        type: 'string',
        description: 'JSON object: delimiter, encoding, include_col_names_as_headers, sheet (XLSX)',
      },
      sheet: {type: 'string', description: 'XLSX: the sheet to import (default the first)'},
      dryRun: {type: 'string', description: 'true: answer what would happen and write nothing'},
    },
    // Access first: a caller who may not edit is answered before any byte of the upload is read.
    need: 'editors',
    handler: async (ctx, {grist, access, role}) => {
      if (!isMultipart(ctx.headers['content-type'])) {
        throw new BadRequest('Send the file as multipart/form-data, in a field named "upload"');
      }
      const form = await ctx.form();
      const files = form.files.get('upload') ?? [];
      if (files.length !== 1)
        throw new BadRequest(files.length ? 'Upload one file at a time' : 'missing payload: no "upload" file');
      const f = files[0];
      const mode = option(ctx, form.fields, 'mode') ?? 'append';
      if (!IMPORT_MODES.includes(mode as ImportMode)) {
        throw new BadRequest(`mode must be one of ${IMPORT_MODES.join(', ')}: ${shownValue(mode)}`);
      }
      return importIntoTable({
        grist,
        access,
        role: role === 'owners' ? 'owners' : 'editors',
        tableId: ctx.params.tableId,
        file: {path: f.path, fileName: f.fileName, format: importFormat(f.fileName, f.mimeType)},
        options: {
          mode: mode as ImportMode,
          keys: keysOption(option(ctx, form.fields, 'keys')),
          mapping: mappingOption(option(ctx, form.fields, 'mapping')),
          parseOptions: parseOptionsOption(ctx, form.fields),
          dryRun: boolOption(option(ctx, form.fields, 'dryRun'), 'dryRun'),
        },
        settings: ctx.engine.importSettings,
        tmpDir: join(ctx.engine.dataDir, 'tmp'),
      });
    },
  }),
];
