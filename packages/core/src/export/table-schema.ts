/**
 * The table-schema download (SPEC §6.3): a Frictionless Data table schema describing the CSV
 * export of a table, in Grist's shape, with decision 5's corrected types (Int and Ref are
 * `integer`; RefList, ChoiceList and Attachments are `array`).
 */
import type Database from 'better-sqlite3';
import type { DocMeta } from '../doc/meta.js';
import { columnHeader, type ExportColumn, type ExportHeader, planTableExport } from './plan.js';

export interface TableSchemaField {
  name: string;
  description?: string;
  type: string;
  [key: string]: unknown;
}

export interface TableSchema {
  format: 'csv';
  mediatype: 'text/csv';
  encoding: 'utf-8';
  path: string;
  dialect: { delimiter: ','; doubleQuote: true };
  name: string;
  title: string;
  schema: { fields: TableSchemaField[] };
}

export interface TableSchemaOptions {
  header?: ExportHeader;
  /** URL of the matching CSV download (`<doc api url>/download/csv?<query>`). */
  csvPath: string;
  meta?: DocMeta;
}

/** Group and decimal separators of the locale, from formatting 1000.1 (absent ones are omitted). */
function numberSeparators(locale: string): { groupChar?: string; decimalChar?: string } {
  let parts: Intl.NumberFormatPart[];
  try {
    parts = new Intl.NumberFormat(locale).formatToParts(1000.1);
  } catch {
    parts = new Intl.NumberFormat('en-US').formatToParts(1000.1);
  }
  return {
    groupChar: parts.find((p) => p.type === 'group')?.value,
    decimalChar: parts.find((p) => p.type === 'decimal')?.value,
  };
}

function typeField(col: ExportColumn, locale: string): { type: string; [key: string]: unknown } {
  const o = col.options;
  switch (col.type.split(':', 1)[0]) {
    case 'Text':
      return { type: 'string', format: o.widget === 'HyperLink' ? 'uri' : 'default' };
    case 'Numeric':
      return { type: 'number', bareNumber: o.numMode === 'decimal', ...numberSeparators(locale) };
    case 'Int':
      return { type: 'integer', bareNumber: o.numMode === 'decimal', groupChar: numberSeparators(locale).groupChar };
    case 'Date':
      return { type: 'date', format: 'any', gristFormat: o.dateFormat || 'YYYY-MM-DD' };
    case 'DateTime':
      // Grist prints "undefined" for a missing part; kept as it is.
      return { type: 'datetime', format: 'any', gristFormat: `${o.dateFormat as string} ${o.timeFormat as string}` };
    case 'Bool':
      return { type: 'boolean', trueValue: ['TRUE'], falseValue: ['FALSE'] };
    case 'Choice':
      return { type: 'string', constraints: { enum: o.choices } };
    case 'ChoiceList':
      return { type: 'array', constraints: { enum: o.choices } };
    case 'Ref':
      return { type: 'integer' };
    case 'RefList': case 'Attachments':
      return { type: 'array' };
    default:
      return { type: 'string' };
  }
}

/** The table schema of a user table; 404 `Table X not found.` for an unknown one. */
export function tableSchema(db: Database.Database, tableId: string, opts: TableSchemaOptions): TableSchema {
  const plan = planTableExport(db, tableId, opts.meta);
  const locale = plan.settings.locale;
  return {
    format: 'csv',
    mediatype: 'text/csv',
    encoding: 'utf-8',
    path: opts.csvPath,
    dialect: { delimiter: ',', doubleQuote: true },
    name: tableId.toLowerCase().replace(/_/g, '-'),
    title: plan.title,
    schema: {
      fields: plan.columns.map((col) => ({
        name: columnHeader(col, opts.header),
        ...(col.description ? { description: col.description } : {}),
        ...typeField(col, locale),
      })),
    },
  };
}
