/**
 * The table-schema download (SPEC §6.3): a Frictionless Data table schema describing the CSV
 * export of a table, in Grist's shape, with decision 5's corrected types (Int and Ref are
 * `integer`; RefList, ChoiceList and Attachments are `array`).
 */
import type Database from 'better-sqlite3';
import {columnType} from '@gristlite/formula';
import type {DocMeta} from '../doc/meta.js';
import {columnHeader, type ExportHeader, type ExportRestriction, planTableExport, restrictPlan} from './plan.js';

/** One field (column) of a table schema. */
export interface TableSchemaField {
  name: string;
  description?: string;
  type: string;
  [key: string]: unknown;
}

/** The Frictionless table schema of a table's CSV download (`/download/table-schema`). */
export interface TableSchema {
  format: 'csv';
  mediatype: 'text/csv';
  encoding: 'utf-8';
  path: string;
  dialect: {delimiter: ','; doubleQuote: true};
  name: string;
  title: string;
  schema: {fields: TableSchemaField[]};
}

/** Options of a table schema: header form and the CSV download it describes. */
export interface TableSchemaOptions {
  header?: ExportHeader;
  /** URL of the matching CSV download (`<doc api url>/download/csv?<query>`). */
  csvPath: string;
  meta?: DocMeta;
  /** Columns access rules hide from the user are left out. */
  restrict?: ExportRestriction;
}

/** The table schema of a user table; 404 `Table X not found.` for an unknown one. */
export function tableSchema(db: Database.Database, tableId: string, opts: TableSchemaOptions): TableSchema {
  const {plan} = restrictPlan(planTableExport(db, tableId, opts.meta), opts.restrict);
  const locale = plan.settings.locale;
  return {
    format: 'csv',
    mediatype: 'text/csv',
    encoding: 'utf-8',
    path: opts.csvPath,
    dialect: {delimiter: ',', doubleQuote: true},
    name: tableId.toLowerCase().replace(/_/g, '-'),
    title: plan.title,
    schema: {
      fields: plan.columns.map((col) => ({
        name: columnHeader(col, opts.header),
        ...(col.description ? {description: col.description} : {}),
        ...columnType(col.type).schemaType(col.options, locale),
      })),
    },
  };
}
