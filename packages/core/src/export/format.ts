/**
 * Display formatting of cell values, as Grist's ValueFormatter does it for exports: each column
 * type's module (@gristlite/formula's cells/coltypes/) formats its cells; references format through the formatter of
 * the referenced table's visible column; values of no particular type as `formatUnknown` does.
 */
import {type CellFormatter, columnType, formatUnknown} from '@gristlite/formula';
import {rowIdFormatter} from '@gristlite/formula';
import type {DocSettings} from '@gristlite/formula';

export {type CellFormatter, formatUnknown, rowIdFormatter};

/** What a cell formatter needs: the column type, widget options and document settings. */
export interface FormatterArgs {
  /** The column's Grist type, e.g. `Numeric`, `DateTime:Europe/Paris`, `Ref:People`. */
  type: string;
  /** Parsed widgetOptions. */
  options: Record<string, unknown>;
  settings: DocSettings;
  /** For Ref/RefList: the formatter of the values shown (the visible column's, or row ids). */
  visible?: CellFormatter;
}

/** Grist's createFormatter (plus the visible-column formatter for references). */
export function createFormatter({type, options, settings, visible}: FormatterArgs): CellFormatter {
  return columnType(type).formatter(options, settings, visible);
}
