export {backupDoc, type BackupOptions} from './backup.js';
export {
  DSV_FORMATS,
  exportFileBase,
  exportTableDsv,
  exportTableDsvText,
  type DsvExport,
  type DsvExportOptions,
  type DsvFormat,
  type ExportSource,
} from './csv.js';
export {createFormatter, formatUnknown, type CellFormatter, type FormatterArgs} from './format.js';
export {formatMoment} from '@gristlite/formula';
export {columnHeader, planTableExport, type ExportColumn, type ExportHeader, type ExportPlan} from './plan.js';
export {tableSchema, type TableSchema, type TableSchemaField, type TableSchemaOptions} from './table-schema.js';
export {preloadXlsx} from './xlsx.js';
