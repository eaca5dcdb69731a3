/**
 * Schema migrations 1..46: what each version of Grist's metadata schema changes, one entry per
 * version (sandbox/grist/migrations.py describes the same changes as Python doc actions). Most
 * entries only add tables or columns (`add`); the others also move or convert values (`run`),
 * reading the metadata as it stands after the previous version.
 *
 * One thing: the ordered list of Grist's 46 schema versions, one entry each, as Grist's own
 * migrations.py keeps them in one file: their order is the point.
 */
import {pickColIdent, pickTableIdent, quoteIdent} from '../identifiers.js';
import {loads} from '@gristlite/formula';
import type {CellValue} from '../types.js';
import {
  byString,
  colSpec,
  escapeRegExp,
  isPlainObject,
  isVisibleColumn,
  type MigrationDb,
  pyJsonDumps,
  type Row,
  safeParse,
  summaryTableName,
  withoutRulesOptions,
} from './db.js';

type Change =
  | {table: string; cols: Array<[string, string]>} // AddTable (when missing)
  | {table: string; col: string; type: string}; // AddColumn (when missing)

export interface SchemaStep {
  version: number;
  summary: string;
  add?: Change[];
  run?: (m: MigrationDb) => void;
}

const T = '_grist_Tables';
const C = '_grist_Tables_column';
const S = '_grist_Views_section';
const F = '_grist_Views_section_field';
const REF_T = 'Ref:_grist_Tables';
const REF_C = 'Ref:_grist_Tables_column';
const REFLIST_C = 'RefList:_grist_Tables_column';

const col = (table: string, colId: string, type: string): Change => ({table, col: colId, type});

export function applyChange(m: MigrationDb, ch: Change): void {
  if ('cols' in ch) {
    if (!m.hasTable(ch.table)) {
      m.addTable(ch.table, ch.cols);
    }
  } else {
    m.addColumn(ch.table, ch.col, ch.type);
  }
}

const num = (v: CellValue): number => (typeof v === 'number' ? v : Number(v) || 0);
const str = (v: CellValue): string => (typeof v === 'string' ? v : v == null ? '' : String(v));

/** Sections with fields for each visible column in parentPos order (migrations 26, 30, 40). */
function addSectionsFor(
  m: MigrationDb,
  tables: Row[],
  section: (t: Row) => Record<string, CellValue>,
  tableField: string,
): void {
  const columns = m.rows(C);
  let sectionId = m.nextId(S);
  for (const t of [...tables].sort(byString((x) => str(x.tableId)))) {
    const cols = columns
      .filter((c) => c.parentId === t.id && isVisibleColumn(str(c.colId)))
      .sort((a, b) => num(a.parentPos) - num(b.parentPos));
    m.insert(S, sectionId, {tableRef: t.id, parentId: 0, title: '', defaultWidth: 100, borderWidth: 1, ...section(t)});
    m.update(T, t.id, {[tableField]: sectionId});
    for (const c of cols) {
      m.insert(F, null, {parentId: sectionId, colRef: c.id, parentPos: c.parentPos});
    }
    sectionId++;
  }
}

/** Rewrites formulas `X.lookupOrAddDerived($a, $b)` as `X.lookupOrAddDerived(a=$a, b=$b)` (migration 3). */
function namedDerivedArgs(formula: string): string {
  return formula.replace(
    /(\w+).lookupOrAddDerived\((.*?)\)/g,
    (_all, table: string, args: string) =>
      `${table}.lookupOrAddDerived(${args
        .split(',')
        .map((a) => a.trim().replace(/^\$(\w+)$/, '$1=$$$1'))
        .join(', ')})`,
  );
}

/** Migration 16: `visibleCol` moved out of widgetOptions into a reference to the shown column. */
function visibleColUpdate(
  colType: string,
  widgetOptions: CellValue,
  tablesById: Map<string, Row>,
  colsByTableCol: Map<string, number>,
): Record<string, CellValue> | null {
  if (!colType.startsWith('Ref:')) {
    return null;
  }
  const target = tablesById.get(colType.slice(4));
  if (!target) {
    return null;
  }
  let options: unknown;
  try {
    options = JSON.parse(str(widgetOptions));
  } catch {
    return null;
  }
  if (!isPlainObject(options)) {
    return null;
  }
  const {visibleCol, ...rest} = options;
  if (!visibleCol) {
    return null;
  }
  const ref = visibleCol === 'id' ? 0 : colsByTableCol.get(`${target.id}:${String(visibleCol)}`);
  if (ref === undefined) {
    return null;
  }
  return {visibleCol: ref, widgetOptions: pyJsonDumps(rest, true)};
}

export const SCHEMA_STEPS: readonly SchemaStep[] = [
  {
    version: 1,
    summary: '_grist_TabItems filled from sections; _grist_Attachments image sizes',
    run(m) {
      // Lax, as Grist's first migration: documents of that age may miss these tables.
      applyChange(m, {
        table: '_grist_Attachments',
        cols: [
          ['fileIdent', 'Text'],
          ['fileName', 'Text'],
          ['fileType', 'Text'],
          ['fileSize', 'Int'],
          ['timeUploaded', 'DateTime'],
        ],
      });
      applyChange(m, {
        table: '_grist_TabItems',
        cols: [
          ['tableRef', REF_T],
          ['viewRef', 'Ref:_grist_Views'],
        ],
      });
      m.addColumn('_grist_DocInfo', 'schemaVersion', 'Int');
      m.addColumn('_grist_Attachments', 'imageHeight', 'Int');
      m.addColumn('_grist_Attachments', 'imageWidth', 'Int');
      const pairs = new Map<string, [number, number]>();
      for (const s of m.rows(S)) {
        pairs.set(`${num(s.tableRef)}:${num(s.parentId)}`, [num(s.tableRef), num(s.parentId)]);
      }
      const rows = [...pairs.values()].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      if (rows.length) {
        m.replaceAll(
          '_grist_TabItems',
          rows.map(([tableRef, viewRef]) => ({tableRef, viewRef})),
        );
      }
    },
  },
  {
    version: 2,
    summary: '_grist_TabBar, _grist_TableViews and _grist_Tables.primaryViewId, from sections',
    run(m) {
      const primary = new Map<number, number>();
      const viewTable = new Map<number, number>();
      for (const s of m.rows(S)) {
        const tableRef = num(s.tableRef);
        const view = num(s.parentId);
        if (!primary.has(tableRef) && s.parentKey === 'record') {
          primary.set(tableRef, view);
        }
        if (!viewTable.has(view)) {
          viewTable.set(view, tableRef);
        }
      }
      applyChange(m, {table: '_grist_TabBar', cols: [['viewRef', 'Ref:_grist_Views']]});
      applyChange(m, {
        table: '_grist_TableViews',
        cols: [
          ['tableRef', REF_T],
          ['viewRef', 'Ref:_grist_Views'],
        ],
      });
      m.addColumn(T, 'primaryViewId', 'Ref:_grist_Views');
      for (const [tableRef, view] of [...primary].sort((a, b) => a[0] - b[0])) {
        m.update(T, tableRef, {primaryViewId: view});
      }
      const views = [...viewTable.keys()].sort((a, b) => a - b);
      m.replaceAll(
        '_grist_TabBar',
        views.map((viewRef) => ({viewRef})),
      );
      const primaryViews = new Set(primary.values());
      m.replaceAll(
        '_grist_TableViews',
        views.filter((v) => !primaryViews.has(v)).map((viewRef) => ({tableRef: viewTable.get(viewRef)!, viewRef})),
      );
    },
  },
  {
    version: 3,
    summary: 'type Derived becomes Any; lookupOrAddDerived() takes named arguments',
    run(m) {
      for (const c of m.rows(C)) {
        if (c.type === 'Derived') {
          m.update(C, c.id, {type: 'Any'});
        }
        const formula = str(c.formula);
        const rewritten = formula && namedDerivedArgs(formula);
        if (rewritten !== formula) {
          m.update(C, c.id, {formula: rewritten});
        }
      }
    },
  },
  {
    version: 4,
    summary: '_grist_TabBar.tabPos, set to the row id',
    run(m) {
      m.addColumn('_grist_TabBar', 'tabPos', 'PositionNumber');
      for (const r of m.rows('_grist_TabBar')) {
        m.update('_grist_TabBar', r.id, {tabPos: r.id});
      }
    },
  },
  // Grist added a formula column _grist_Views.primaryViewTable at 5 and removed it at 6.
  {
    version: 5,
    summary: '_grist_Views.primaryViewTable (removed again by 6)',
    add: [col('_grist_Views', 'primaryViewTable', REF_T)],
  },
  {
    version: 6,
    summary: '_grist_Views.primaryViewTable removed',
    run(m) {
      m.removeColumn('_grist_Views', 'primaryViewTable');
    },
  },
  {
    version: 7,
    summary: 'old-style summary tables (Summary_<Source>_<colRefs>) renamed and linked to their source',
    run: migrateOldSummaries,
  },
  {version: 8, summary: '_grist_Tables_column.untieColIdFromLabel', add: [col(C, 'untieColIdFromLabel', 'Bool')]},
  {
    version: 9,
    summary: 'displayCol on columns and fields',
    add: [col(C, 'displayCol', REF_C), col(F, 'displayCol', REF_C)],
  },
  {
    version: 10,
    summary: 'a gristHelper_Display column for each reference column showing another column',
    run: addDisplayColumns,
  },
  {version: 11, summary: '_grist_Views_section.embedId', add: [col(S, 'embedId', 'Text')]},
  {version: 12, summary: '_grist_Views_section.options', add: [col(S, 'options', 'Text')]},
  {version: 13, summary: '_grist_DocInfo.basketId', add: [col('_grist_DocInfo', 'basketId', 'Text')]},
  {
    version: 14,
    summary: 'ACL tables with the default groups, resource and rule',
    run(m) {
      const existed = m.hasTable('_grist_ACLPrincipals');
      applyChange(m, {
        table: '_grist_ACLMemberships',
        cols: [
          ['parent', 'Ref:_grist_ACLPrincipals'],
          ['child', 'Ref:_grist_ACLPrincipals'],
        ],
      });
      applyChange(m, {
        table: '_grist_ACLPrincipals',
        cols: [
          ['userName', 'Text'],
          ['groupName', 'Text'],
          ['userEmail', 'Text'],
          ['instanceId', 'Text'],
          ['type', 'Text'],
        ],
      });
      applyChange(m, {
        table: '_grist_ACLResources',
        cols: [
          ['colIds', 'Text'],
          ['tableId', 'Text'],
        ],
      });
      applyChange(m, {
        table: '_grist_ACLRules',
        cols: [
          ['aclFormula', 'Text'],
          ['principals', 'Text'],
          ['resource', 'Ref:_grist_ACLResources'],
          ['aclColumn', REF_C],
          ['permissions', 'Int'],
        ],
      });
      if (existed) {
        return;
      }
      ['Owners', 'Admins', 'Editors', 'Viewers'].forEach((groupName, i) =>
        m.insert('_grist_ACLPrincipals', i + 1, {type: 'group', groupName}),
      );
      m.insert('_grist_ACLResources', 1, {tableId: '', colIds: ''});
      m.insert('_grist_ACLRules', 1, {resource: 1, permissions: 0x3f, principals: '[1]'});
    },
  },
  {
    version: 15,
    summary: 'field filters moved from the section filterSpec to _grist_Views_section_field.filter',
    run(m) {
      m.addColumn(F, 'filter', 'Text');
      const specs = new Map(m.rows(S).map((s) => [s.id, safeParse(s.filterSpec)]));
      for (const f of m.rows(F)) {
        const spec = specs.get(num(f.parentId));
        const key = String(num(f.colRef));
        if (isPlainObject(spec) && Object.keys(spec).length && key in spec) {
          m.update(F, f.id, {filter: pyJsonDumps(spec[key])});
        }
      }
    },
  },
  {
    version: 16,
    summary: 'visibleCol on columns and fields, from their widgetOptions',
    run(m) {
      m.addColumn(C, 'visibleCol', REF_C);
      m.addColumn(F, 'visibleCol', REF_C);
      const tablesById = new Map(m.rows(T).map((t) => [str(t.tableId), t]));
      const columns = m.rows(C);
      const byRef = new Map(columns.map((c) => [c.id, c]));
      const byTableCol = new Map(columns.map((c) => [`${num(c.parentId)}:${str(c.colId)}`, c.id]));
      for (const c of columns) {
        const update = visibleColUpdate(str(c.type), c.widgetOptions, tablesById, byTableCol);
        if (update) {
          m.update(C, c.id, update);
        }
      }
      for (const f of m.rows(F)) {
        const c = byRef.get(num(f.colRef));
        const update = c && visibleColUpdate(str(c.type), f.widgetOptions, tablesById, byTableCol);
        if (update) {
          m.update(F, f.id, update);
        }
      }
    },
  },
  {
    version: 17,
    summary: 'type Image becomes Attachments; a stored image id n becomes the list [n]',
    run: imagesToAttachments,
  },
  {
    version: 18,
    summary: '_grist_DocInfo.timezone, America/New_York (where earlier documents were made)',
    run(m) {
      m.addColumn('_grist_DocInfo', 'timezone', 'Text');
      m.update('_grist_DocInfo', 1, {timezone: 'America/New_York'});
    },
  },
  {version: 19, summary: '_grist_Tables.onDemand', add: [col(T, 'onDemand', 'Bool')]},
  {
    version: 20,
    summary: '_grist_Pages, one page per view: tables by tableId, their other views indented',
    run(m) {
      const tables = new Map(m.rows(T).map((t) => [t.id, str(t.tableId)]));
      const viewTable = new Map<number, string>();
      for (const tv of m.rows('_grist_TableViews')) {
        const tableId = tables.get(num(tv.tableRef));
        if (tableId !== undefined) {
          viewTable.set(num(tv.viewRef), tableId);
        }
      }
      const key = (v: Row): [string, number] =>
        viewTable.has(v.id) ? [viewTable.get(v.id)!, v.id] : [str(v.name), -1];
      const views = m.rows('_grist_Views').sort((a, b) => {
        const [x, i] = key(a);
        const [y, j] = key(b);
        return x < y ? -1 : x > y ? 1 : i - j;
      });
      applyChange(m, {
        table: '_grist_Pages',
        cols: [
          ['viewRef', 'Ref:_grist_Views'],
          ['pagePos', 'PositionNumber'],
          ['indentation', 'Int'],
        ],
      });
      m.replaceAll(
        '_grist_Pages',
        views.map((v, i) => ({viewRef: v.id, pagePos: i + 1, indentation: viewTable.has(v.id) ? 1 : 0})),
      );
    },
  },
  {
    version: 21,
    summary: 'ACL rules: aclFormulaParsed, permissionsText, rulePos, userAttributes',
    add: [
      col('_grist_ACLRules', 'aclFormulaParsed', 'Text'),
      col('_grist_ACLRules', 'permissionsText', 'Text'),
      col('_grist_ACLRules', 'rulePos', 'PositionNumber'),
      col('_grist_ACLRules', 'userAttributes', 'Text'),
    ],
  },
  {
    version: 22,
    summary: 'trigger formulas: recalcWhen, recalcDeps',
    add: [col(C, 'recalcWhen', 'Int'), col(C, 'recalcDeps', REFLIST_C)],
  },
  {
    version: 23,
    summary: '_grist_DocInfo.documentSettings, locale en-US',
    run(m) {
      m.addColumn('_grist_DocInfo', 'documentSettings', 'Text');
      m.update('_grist_DocInfo', 1, {documentSettings: '{"locale":"en-US"}'});
    },
  },
  {
    version: 24,
    summary: '_grist_Triggers',
    add: [
      {
        table: '_grist_Triggers',
        cols: [
          ['tableRef', REF_T],
          ['eventTypes', 'ChoiceList'],
          ['isReadyColRef', REF_C],
          ['actions', 'Text'],
        ],
      },
    ],
  },
  {
    version: 25,
    summary: "_grist_Filters, filled from the fields' filters",
    run(m) {
      applyChange(m, {
        table: '_grist_Filters',
        cols: [
          ['viewSectionRef', 'Ref:_grist_Views_section'],
          ['colRef', REF_C],
          ['filter', 'Text'],
        ],
      });
      for (const f of m.rows(F)) {
        if (!f.filter) {
          continue;
        }
        m.insert('_grist_Filters', null, {filter: f.filter, colRef: f.colRef, viewSectionRef: f.parentId});
      }
    },
  },
  {
    version: 26,
    summary: 'a raw data section for each table with a primary view (_grist_Tables.rawViewSectionRef)',
    run(m) {
      m.addColumn(T, 'rawViewSectionRef', 'Ref:_grist_Views_section');
      const views = new Map(m.rows('_grist_Views').map((v) => [v.id, v]));
      const tables = m.rows(T).filter((t) => num(t.primaryViewId) && views.has(num(t.primaryViewId)));
      addSectionsFor(
        m,
        tables,
        (t) => ({parentKey: 'record', title: views.get(num(t.primaryViewId))!.name}),
        'rawViewSectionRef',
      );
    },
  },
  {
    version: 27,
    summary: 'conditional style rules on columns and fields',
    add: [col(C, 'rules', REFLIST_C), col(F, 'rules', REFLIST_C)],
  },
  {
    version: 28,
    summary: '_grist_Attachments.timeDeleted; Attachments columns declared TEXT, their lists stored as JSON',
    run: attachmentsAsJson,
  },
  {
    version: 29,
    summary: 'invalid conditional rules (pointing to another table) dropped',
    run(m) {
      const columns = m.rows(C);
      const byRef = new Map(columns.map((c) => [c.id, c]));
      for (const c of columns) {
        if (!c.rules) {
          continue;
        }
        const rules = Array.isArray(c.rules) && c.rules[0] === 'L' ? c.rules.slice(1) : safeParse(c.rules);
        const valid = Array.isArray(rules) && rules.every((r) => byRef.get(r as number)?.parentId === c.parentId);
        if (valid) {
          continue;
        }
        m.update(C, c.id, {rules: null, widgetOptions: withoutRulesOptions(c.widgetOptions)});
      }
    },
  },
  {
    version: 30,
    summary: 'a raw data section for each summary table',
    run(m) {
      const tables = m.rows(T).filter((t) => num(t.summarySourceTable));
      addSectionsFor(m, tables, () => ({parentKey: 'record'}), 'rawViewSectionRef');
    },
  },
  {
    version: 31,
    summary: 'summary tables renamed <Source>_summary_<colIds>; formulas and ACL resources follow',
    run: renameSummaries,
  },
  {version: 32, summary: '_grist_Views_section.rules', add: [col(S, 'rules', REFLIST_C)]},
  {
    version: 33,
    summary: '_grist_Cells (cell comments)',
    add: [
      {
        table: '_grist_Cells',
        cols: [
          ['tableRef', REF_T],
          ['colRef', REF_C],
          ['rowId', 'Int'],
          ['root', 'Bool'],
          ['parentId', 'Ref:_grist_Cells'],
          ['type', 'Int'],
          ['content', 'Text'],
          ['userRef', 'Text'],
        ],
      },
    ],
  },
  {
    version: 34,
    summary: '_grist_Filters.pinned: true in raw sections and sections showing the filter bar',
    run(m) {
      m.addColumn('_grist_Filters', 'pinned', 'Bool');
      const raw = new Set(m.rows(T).map((t) => num(t.rawViewSectionRef)));
      const bar = new Map(
        m.rows(S).map((s) => {
          const opts = safeParse(s.options);
          return [s.id, raw.has(s.id) || Boolean(isPlainObject(opts) && opts.filterBar)];
        }),
      );
      for (const f of m.rows('_grist_Filters')) {
        m.update('_grist_Filters', f.id, {pinned: bar.get(num(f.viewSectionRef)) ?? false});
      }
    },
  },
  {
    version: 35,
    summary: '_grist_ACLRules.memo, from comments in the parsed formula',
    run(m) {
      m.addColumn('_grist_ACLRules', 'memo', 'Text');
      for (const r of m.rows('_grist_ACLRules')) {
        const parsed = safeParse(r.aclFormulaParsed);
        if (Array.isArray(parsed) && parsed.length && parsed[0] === 'Comment') {
          m.update('_grist_ACLRules', r.id, {memo: parsed[2] as CellValue});
        }
      }
    },
  },
  {version: 36, summary: '_grist_Tables_column.description', add: [col(C, 'description', 'Text')]},
  {version: 37, summary: '_grist_Attachments.fileExt', add: [col('_grist_Attachments', 'fileExt', 'Text')]},
  {version: 38, summary: "nothing (Grist withdrew this version's change; 39 reconciles)"},
  {
    version: 39,
    summary: 'webhook triggers: memo, label, enabled (true); section descriptions',
    run(m) {
      if (!m.hasColumn('_grist_Triggers', 'memo')) {
        m.addColumn('_grist_Triggers', 'memo', 'Text');
        m.addColumn('_grist_Triggers', 'label', 'Text');
        m.addColumn('_grist_Triggers', 'enabled', 'Bool');
        for (const t of m.rows('_grist_Triggers')) {
          m.update('_grist_Triggers', t.id, {enabled: true});
        }
      }
      m.addColumn(S, 'description', 'Text');
    },
  },
  {
    version: 40,
    summary: 'a record card section for each table with a raw section (not summaries)',
    run(m) {
      m.addColumn(T, 'recordCardViewSectionRef', 'Ref:_grist_Views_section');
      const tables = m.rows(T).filter((t) => num(t.rawViewSectionRef) && !num(t.summarySourceTable));
      addSectionsFor(m, tables, () => ({parentKey: 'single'}), 'recordCardViewSectionRef');
    },
  },
  {
    version: 41,
    summary: '_grist_Shares; _grist_Pages.shareRef; _grist_Views_section.shareOptions',
    add: [
      {
        table: '_grist_Shares',
        cols: [
          ['linkId', 'Text'],
          ['options', 'Text'],
          ['label', 'Text'],
          ['description', 'Text'],
        ],
      },
      col('_grist_Pages', 'shareRef', 'Ref:_grist_Shares'),
      col(S, 'shareOptions', 'Text'),
    ],
  },
  {
    version: 42,
    summary: 'webhook triggers: watchedColRefList, options',
    add: [col('_grist_Triggers', 'watchedColRefList', REFLIST_C), col('_grist_Triggers', 'options', 'Text')],
  },
  {version: 43, summary: '_grist_Tables_column.reverseCol (two-way references)', add: [col(C, 'reverseCol', REF_C)]},
  {version: 44, summary: '_grist_Pages.options', add: [col('_grist_Pages', 'options', 'Text')]},
  {
    version: 45,
    summary: 'cell comments: timeCreated, timeUpdated, resolved moved out of the JSON content',
    run(m) {
      m.addColumn('_grist_Cells', 'timeCreated', 'DateTime');
      m.addColumn('_grist_Cells', 'timeUpdated', 'DateTime');
      m.addColumn('_grist_Cells', 'resolved', 'Bool');
      for (const cell of m.rows('_grist_Cells')) {
        const parsed = safeParse(cell.content);
        const content = isPlainObject(parsed) ? parsed : {};
        const secs = (v: unknown) => (v === undefined || v === null ? 0 : Math.trunc(Number(v) / 1000));
        const moved = ['timeCreated', 'timeUpdated', 'resolved'].some((k) => k in content);
        const {timeCreated, timeUpdated, resolved, ...rest} = content;
        m.update('_grist_Cells', cell.id, {
          timeCreated: secs(timeCreated),
          timeUpdated: secs(timeUpdated),
          resolved: Boolean(resolved),
          content: moved ? pyJsonDumps(rest) : cell.content,
        });
      }
    },
  },
  {version: 46, summary: '_grist_Triggers.condition', add: [col('_grist_Triggers', 'condition', 'Text')]},
];

function migrateOldSummaries(m: MigrationDb): void {
  m.addColumn(T, 'summarySourceTable', REF_T);
  m.addColumn(C, 'summarySourceCol', REF_C);
  const tables = m.rows(T);
  const byName = new Map(tables.map((t) => [str(t.tableId), t.id]));
  const columns = m.rows(C);
  const colByRef = new Map(columns.map((c) => [c.id, c]));
  const colByTableCol = new Map(columns.map((c) => [`${num(c.parentId)}:${str(c.colId)}`, c]));
  const names = new Set(byName.keys());
  const removeCols: Row[] = [];
  const formulaUpdates: Row[] = [];
  const renames: Array<[Row, string]> = [];
  const sources: Array<[Row, number]> = [];
  const sourceCols: Array<[Row, number]> = [];
  for (const t of tables) {
    const match = /^Summary_(\w+?)((?:_\d+)*)$/.exec(str(t.tableId));
    if (!match || !byName.has(match[1])) {
      continue;
    }
    const source = match[1];
    const sourceRef = byName.get(source)!;
    const groupByRefs = match[2]
      .replace(/^_+|_+$/g, '')
      .split('_')
      .map((x) => {
        if (!/^\d+$/.test(x)) {
          throw new Error(`summary table ${str(t.tableId)} names no group-by columns`);
        }
        return Number(x);
      });
    const groupByIds = groupByRefs.map((r) => {
      const c = colByRef.get(r);
      if (!c) {
        throw new Error(`summary table ${str(t.tableId)}: no column ${r}`);
      }
      return str(c.colId);
    });
    const newName = pickTableIdent(summaryTableName(source, groupByIds), names);
    names.add(newName);
    removeCols.push(...columns.filter((c) => c.parentId === sourceRef && c.colId === t.tableId));
    const oldGroupFormula = `${source}.lookupRecords(${str(t.tableId)}=$id)`;
    formulaUpdates.push(
      ...columns.filter((c) => c.parentId === t.id && c.colId === 'group' && c.formula === oldGroupFormula),
    );
    renames.push([t, newName]);
    sources.push([t, sourceRef]);
    const groupCols = new Set<Row>();
    for (const r of groupByRefs) {
      const src = colByRef.get(r);
      const sum = src && colByTableCol.get(`${t.id}:${str(src.colId)}`);
      if (sum) {
        groupCols.add(sum);
        sourceCols.push([sum, src.id]);
      }
    }
    removeCols.push(...columns.filter((c) => c.parentId === t.id && !groupCols.has(c) && !c.isFormula));
  }
  const tableIdOf = new Map(tables.map((t) => [t.id, str(t.tableId)]));
  for (const c of removeCols) {
    const tableId = tableIdOf.get(num(c.parentId));
    if (tableId !== undefined && m.hasTable(tableId)) {
      m.removeColumn(tableId, str(c.colId));
    }
    m.db.prepare(`DELETE FROM _grist_Tables_column WHERE id = ?`).run(c.id);
  }
  for (const [t, name] of renames) {
    m.renameTable(str(t.tableId), name);
    m.update(T, t.id, {tableId: name});
  }
  for (const [t, ref] of sources) {
    m.update(T, t.id, {summarySourceTable: ref});
  }
  for (const [c, ref] of sourceCols) {
    m.update(C, c.id, {summarySourceCol: ref});
  }
  for (const c of formulaUpdates) {
    m.update(C, c.id, {formula: 'table.getSummarySourceGroup(rec)'});
  }
}

function addDisplayColumns(m: MigrationDb): void {
  const tables = new Map(m.rows(T).map((t) => [t.id, str(t.tableId)]));
  const usedIds = new Map<number, Set<string>>();
  for (const [ref, tableId] of tables) {
    usedIds.set(ref, new Set(m.hasTable(tableId) ? m.columnInfo(tableId).map((c) => c.name) : []));
  }
  let rowId = m.nextId(C);
  for (const c of m.rows(C)) {
    if (!str(c.type).startsWith('Ref:') || num(c.displayCol)) {
      continue;
    }
    const options = safeParse(c.widgetOptions);
    const visible = isPlainObject(options) ? options.visibleCol : undefined;
    if (!visible || typeof c.widgetOptions !== 'string' || !c.widgetOptions) {
      continue;
    }
    const tableId = tables.get(num(c.parentId));
    if (tableId === undefined) {
      continue;
    }
    const formula = `$${str(c.colId)}.${String(visible)}`;
    // Grist picks a free id but adds the column as gristHelper_Display (a second one in a table
    // fails there); the free id is used here, so such documents upgrade too.
    const used = usedIds.get(num(c.parentId))!;
    const colId = pickColIdent('gristHelper_Display', used);
    used.add(colId);
    if (m.hasTable(tableId)) {
      m.addColumn(tableId, colId, 'Any');
    }
    m.insert(C, rowId, {
      parentPos: 1.0,
      label: colId,
      isFormula: true,
      parentId: c.parentId,
      colId,
      formula,
      widgetOptions: '',
      type: 'Any',
    });
    m.update(C, c.id, {displayCol: rowId});
    rowId++;
  }
}

/** Rebuilds a user column with a new declared type and default (DocStorage's ModifyColumn). */
function retypeColumn(m: MigrationDb, tableId: string, colId: string, sqlType: string, dflt: string): boolean {
  const info = m.columnInfo(tableId);
  const target = info.find((c) => c.name === colId);
  if (!target || (target.type === sqlType && target.dflt_value === dflt)) {
    return false;
  }
  const rest = info.filter((c) => c.name !== 'id');
  m.rebuild(
    tableId,
    [
      'id INTEGER PRIMARY KEY',
      ...rest.map((c) => colSpec(c.name === colId ? {name: colId, type: sqlType, dflt_value: dflt} : c)),
    ],
    ['id', ...rest.map((c) => quoteIdent(c.name))],
  );
  return true;
}

function imagesToAttachments(m: MigrationDb): void {
  const tables = new Map(m.rows(T).map((t) => [t.id, str(t.tableId)]));
  for (const c of m.rows(C)) {
    if (c.type !== 'Image') {
      continue;
    }
    m.update(C, c.id, {type: 'Attachments'});
    const tableId = tables.get(num(c.parentId));
    if (tableId === undefined || !m.hasTable(tableId) || !m.hasColumn(tableId, str(c.colId))) {
      continue;
    }
    const q = quoteIdent(str(c.colId));
    const t = quoteIdent(tableId);
    // Read before the column turns TEXT (the rebuild would store the ids as text).
    const rows = m.db.prepare(`SELECT id, ${q} AS v FROM ${t}`).all() as Array<{id: number; v: unknown}>;
    retypeColumn(m, tableId, str(c.colId), 'TEXT', 'NULL');
    if (c.isFormula) {
      continue;
    }
    const set = m.db.prepare(`UPDATE ${t} SET ${q} = ? WHERE id = ?`);
    for (const r of rows) {
      const v = typeof r.v === 'bigint' ? Number(r.v) : r.v;
      set.run(JSON.stringify(typeof v === 'number' && Number.isInteger(v) && v > 0 ? [v] : []), r.id);
    }
  }
}

function attachmentsAsJson(m: MigrationDb): void {
  m.addColumn('_grist_Attachments', 'timeDeleted', 'DateTime');
  const tables = new Map(m.rows(T).map((t) => [t.id, str(t.tableId)]));
  for (const c of m.rows(C)) {
    if (c.type !== 'Attachments') {
      continue;
    }
    const tableId = tables.get(num(c.parentId));
    if (tableId === undefined || !m.hasTable(tableId)) {
      continue;
    }
    if (!retypeColumn(m, tableId, str(c.colId), 'TEXT', 'NULL')) {
      continue;
    }
    // Marshalled lists of ids become JSON text, as DocStorage re-encodes them for the new SQL type.
    const q = quoteIdent(str(c.colId));
    const t = quoteIdent(tableId);
    const rows = m.db.prepare(`SELECT id, ${q} AS v FROM ${t} WHERE typeof(${q}) = 'blob'`).all() as Array<{
      id: number;
      v: Buffer;
    }>;
    const set = m.db.prepare(`UPDATE ${t} SET ${q} = ? WHERE id = ?`);
    for (const r of rows) {
      const json = blobListToJson(r.v);
      if (json !== null) {
        set.run(json, r.id);
      }
    }
  }
}

/** `['L', 1, 2]` (marshalled) as `[1,2]`; anything else stays as it is (null). */
function blobListToJson(raw: Buffer): string | null {
  let v: unknown;
  try {
    v = loads(raw);
  } catch {
    return null;
  }
  if (Array.isArray(v) && v[0] === 'L' && v.slice(1).every((x) => typeof x === 'number')) {
    return JSON.stringify(v.slice(1));
  }
  return null;
}

function renameSummaries(m: MigrationDb): void {
  const tables = m.rows(T);
  const byRef = new Map(tables.map((t) => [t.id, t]));
  const columns = m.rows(C);
  const names = new Set(tables.map((t) => str(t.tableId)));
  const renames: Array<[string, string, number]> = [];
  for (const t of tables) {
    if (!num(t.summarySourceTable)) {
      continue;
    }
    const source = byRef.get(num(t.summarySourceTable));
    if (!source) {
      throw new Error(`summary table ${str(t.tableId)} has no source table`);
    }
    const groupBy = columns.filter((c) => c.parentId === t.id && num(c.summarySourceCol)).map((c) => str(c.colId));
    let name = summaryTableName(str(source.tableId), groupBy);
    if (name === t.tableId) {
      continue;
    }
    name = pickTableIdent(name, names);
    names.add(name);
    renames.push([str(t.tableId), name, t.id]);
  }
  for (const [from, to, ref] of renames) {
    m.renameTable(from, to);
    m.update(T, ref, {tableId: to});
  }
  for (const c of columns) {
    let formula = str(c.formula);
    if (!formula.includes('GristSummary_')) {
      continue;
    }
    for (const [from, to] of renames) {
      formula = formula.replace(new RegExp(`\\b${escapeRegExp(from)}\\b`, 'g'), to);
    }
    m.update(C, c.id, {formula});
  }
  const renamed = new Map(renames.map(([from, to]) => [from, to]));
  for (const r of m.rows('_grist_ACLResources')) {
    const to = renamed.get(str(r.tableId));
    if (to) {
      m.update('_grist_ACLResources', r.id, {tableId: to});
    }
  }
}
