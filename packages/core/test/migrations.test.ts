// Migrations one step at a time: a document brought to version N-1, then step N alone, and the
// change that step makes (every version 1..46); storage steps against Grist's own upgraded files;
// a failing step leaving the file untouched; a document newer than 46 served read-only.
import Database from 'better-sqlite3';
import {createHash} from 'node:crypto';
import {execFileSync} from 'node:child_process';
import {mkdtempSync, readdirSync, readFileSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc, META_TYPES} from '../src/doc/index.js';
import {Engine} from '../src/engine/engine.js';
import {importUpload} from '../src/import/index.js';
import {MigrationDb} from '../src/doc/migrations/db.js';
import {runSteps, SCHEMA_STEPS, upgradeDocFile} from '../src/doc/migrations/index.js';
import {sqlDefaultFor, sqlTypeFor} from '@gristlite/formula';
import {copyTo, findFixtureDirs, listFixtures, placeholder} from './migrations-helpers.js';
import {underCi} from '../src/testing/fixtures.js';

// The step tests start from the corpus's documents (the World-v* ladder, BlobMigrationV*, ...).
const found = findFixtureDirs(['grist', 'corpus']);
const all = 'dirs' in found ? listFixtures(found.dirs) : [];
const fixture = (name: string) => all.find((f) => f.name === name)!.path;

const schemas = new Map<string, number>();
function schemaOf(path: string): number {
  if (!schemas.has(path)) {
    schemas.set(path, readSchema(path));
  }
  return schemas.get(path)!;
}

function readSchema(path: string): number {
  const db = new Database(path, {readonly: true});
  try {
    const has = db.prepare(`SELECT 1 FROM pragma_table_info('_grist_DocInfo') WHERE name = 'schemaVersion'`).get();
    return has ? Number(db.prepare(`SELECT schemaVersion FROM _grist_DocInfo`).pluck().get()) : 0;
  } finally {
    db.close();
  }
}

/** The fixture with the highest schema below `version` (World-v* rungs preferred). */
function fixtureBefore(version: number): string {
  const candidates = all
    .map((f) => ({...f, schema: schemaOf(f.path)}))
    .filter((f) => f.schema < version)
    .sort((a, b) => b.schema - a.schema || Number(b.name.startsWith('World-v')) - Number(a.name.startsWith('World-v')));
  return candidates[0].name;
}

/** Runs a document up to `version - 1`, lets `prepare` set the scene, then runs step `version` alone. */
function step(
  name: string,
  version: number,
  check: (m: MigrationDb) => void,
  prepare?: (m: MigrationDb) => void,
): void {
  const db = new Database(copyTo(fixture(name), name));
  try {
    const m = new MigrationDb(db);
    db.transaction(() => runSteps(db, {schema: version - 1}))();
    prepare?.(m);
    const res = db.transaction(() => runSteps(db, {schema: version}))();
    assert.equal(res.steps, [`schema ${version}`]);
    assert.is(Number(db.prepare(`SELECT schemaVersion FROM _grist_DocInfo`).pluck().get()), version);
    check(m);
    assert.is(db.pragma('integrity_check', {simple: true}), 'ok');
  } finally {
    db.close();
  }
}

const rows = (m: MigrationDb, t: string) => m.rows(t);
const decl = (m: MigrationDb, t: string, c: string) => m.columnInfo(t).find((x) => x.name === c);

if ('missing' in found) {
  placeholder(test, 'migrations: every step 1..46 on the fixtures and the corpus', found.missing);
} else {
  test('every step that adds tables or columns adds them with the SQL type and default of their Grist type', () => {
    for (const s of SCHEMA_STEPS.filter((x) => x.add)) {
      const name = fixtureBefore(s.version);
      step(
        name,
        s.version,
        (m) => {
          for (const ch of s.add!) {
            if ('cols' in ch) {
              for (const [c, type] of ch.cols) {
                assert.equal(
                  decl(m, ch.table, c),
                  {name: c, type: sqlTypeFor(type), dflt_value: sqlDefaultFor(type), pk: 0},
                  `${s.version} ${ch.table}.${c}`,
                );
              }
            } else if (s.version !== 5) {
              assert.equal(
                decl(m, ch.table, ch.col),
                {name: ch.col, type: sqlTypeFor(ch.type), dflt_value: sqlDefaultFor(ch.type), pk: 0},
                `${s.version} ${ch.table}.${ch.col}`,
              );
            }
          }
        },
        (m) => {
          for (const ch of s.add!) {
            assert.not.ok(
              'cols' in ch ? m.hasTable(ch.table) : m.hasColumn(ch.table, ch.col),
              `${s.version} (${name}): absent before`,
            );
          }
        },
      );
    }
  });

  test('1: _grist_TabItems gets one row per (table, view) of the sections; DocInfo gets schemaVersion', () => {
    step('World-v0.grist', 1, (m) => {
      const pairs = [...new Set(rows(m, '_grist_Views_section').map((s) => `${s.tableRef}:${s.parentId}`))].sort();
      assert.equal(
        rows(m, '_grist_TabItems')
          .map((r) => `${r.tableRef}:${r.viewRef}`)
          .sort(),
        pairs,
      );
      assert.ok(pairs.length > 0);
      assert.ok(m.hasColumn('_grist_Attachments', 'imageWidth'));
    });
  });

  test("2: each table's primary view is its first record section's view; TabBar lists every view", () => {
    step('World-v1.grist', 2, (m) => {
      const sections = rows(m, '_grist_Views_section');
      for (const t of rows(m, '_grist_Tables')) {
        const first = sections.find((s) => s.tableRef === t.id && s.parentKey === 'record');
        assert.is(t.primaryViewId, first ? first.parentId : 0, String(t.tableId));
      }
      assert.equal(
        rows(m, '_grist_TabBar').map((r) => r.viewRef),
        [...new Set(sections.map((s) => s.parentId))].sort((a, b) => Number(a) - Number(b)),
      );
    });
  });

  test('3: Derived becomes Any; lookupOrAddDerived($a, $b) takes named arguments', () => {
    step(
      'CC_Summaries-v2.grist',
      3,
      (m) => {
        const c = rows(m, '_grist_Tables_column').find((x) => x.id === 1)!;
        assert.is(c.type, 'Any');
        assert.is(c.formula, 'Summary.lookupOrAddDerived(a=$a, b=$b) + 1');
      },
      (m) => m.update('_grist_Tables_column', 1, {type: 'Derived', formula: 'Summary.lookupOrAddDerived($a,$b) + 1'}),
    );
  });

  test('4: _grist_TabBar.tabPos is the row id', () => {
    step('World-v3.grist', 4, (m) => {
      const tabs = rows(m, '_grist_TabBar');
      assert.ok(tabs.length > 0);
      for (const t of tabs) {
        assert.is(t.tabPos, t.id);
      }
    });
  });

  test('5 adds _grist_Views.primaryViewTable, 6 removes it again keeping the views', () => {
    step('World-v3.grist', 5, (m) => assert.equal(decl(m, '_grist_Views', 'primaryViewTable')?.type, 'INTEGER'));
    step('CC_Summaries-v2.grist', 6, (m) => {
      assert.not.ok(m.hasColumn('_grist_Views', 'primaryViewTable'));
      assert.ok(rows(m, '_grist_Views').length > 0);
    });
  });

  test('7: Summary_<Source>_<colRefs> tables renamed, linked to their source, non-group columns dropped', () => {
    step('CC_Summaries-v6.grist', 7, (m) => {
      const tables = rows(m, '_grist_Tables');
      assert.equal(
        tables.map((t) => [t.tableId, t.summarySourceTable]),
        [
          ['Sheet1', 0],
          ['Sheet1_summary_Card_Member', 1],
          ['Sheet1_summary_Card_Member_Category', 1],
        ],
      );
      assert.ok(m.hasTable('Sheet1_summary_Card_Member') && !m.hasTable('Summary_Sheet1_5'));
      const cols = rows(m, '_grist_Tables_column');
      const group = cols.filter((c) => c.parentId !== 1 && c.summarySourceCol);
      assert.equal(group.map((c) => c.colId).sort(), ['Card_Member', 'Card_Member', 'Category']);
      for (const t of tables.slice(1)) {
        const stored = cols.filter((c) => c.parentId === t.id && !c.isFormula);
        assert.ok(
          stored.every((c) => c.summarySourceCol),
          `${t.tableId}: only group-by data columns`,
        );
        assert.equal(
          cols.filter((c) => c.parentId === t.id && c.colId === 'group').map((c) => c.formula),
          ['table.getSummarySourceGroup(rec)'],
        );
      }
      assert.not.ok(cols.some((c) => c.parentId === 1 && String(c.colId).startsWith('Summary_')));
    });
  });

  test('10: a reference column showing another column gets gristHelper_Display ($Ref.Col)', () => {
    step('World-v8.grist', 10, (m) => {
      const cols = rows(m, '_grist_Tables_column');
      const country =
        cols.find((c) => c.colId === 'Country' && c.type === 'Ref:Country' && c.parentId === 2) ??
        cols.find((c) => c.colId === 'Country' && String(c.type) === 'Ref:Country')!;
      const display = cols.find((c) => c.id === country.displayCol)!;
      assert.equal(
        [display.colId, display.formula, display.isFormula, display.type],
        ['gristHelper_Display', '$Country.Name', true, 'Any'],
      );
      assert.ok(m.hasColumn('City', 'gristHelper_Display'));
    });
  });

  test("14: ACL tables with the groups Owners..Viewers, one resource and the owners' rule", () => {
    step('World-v13.grist', 14, (m) => {
      assert.equal(
        rows(m, '_grist_ACLPrincipals').map((p) => [p.id, p.type, p.groupName]),
        [
          [1, 'group', 'Owners'],
          [2, 'group', 'Admins'],
          [3, 'group', 'Editors'],
          [4, 'group', 'Viewers'],
        ],
      );
      assert.equal(
        rows(m, '_grist_ACLRules').map((r) => [r.resource, r.permissions, r.principals]),
        [[1, 63, '[1]']],
      );
    });
  });

  test("15: a section's filterSpec moves to its fields, as Python's json.dumps writes it", () => {
    let target = 0;
    step(
      'World-v14.grist',
      15,
      (m) => {
        const fields = rows(m, '_grist_Views_section_field');
        assert.is(fields.find((f) => f.id === target)!.filter, '{"included": ["a", "\\u00e9"]}');
      },
      (m) => {
        const f = rows(m, '_grist_Views_section_field')[0];
        target = f.id;
        m.update('_grist_Views_section', Number(f.parentId), {
          filterSpec: JSON.stringify({[String(f.colRef)]: {included: ['a', 'é']}}),
        });
      },
    );
  });

  test('16: visibleCol leaves widgetOptions for a reference to the shown column', () => {
    step('World-v15.grist', 16, (m) => {
      const cols = rows(m, '_grist_Tables_column');
      const ref = cols.find((c) => c.colId === 'Country' && c.type === 'Ref:Country')!;
      const name = cols.find(
        (c) => c.colId === 'Name' && rows(m, '_grist_Tables').find((t) => t.id === c.parentId)?.tableId === 'Country',
      )!;
      assert.is(ref.visibleCol, name.id);
      assert.equal(JSON.parse(String(ref.widgetOptions)), {widget: 'Reference'});
      assert.not.match(String(ref.widgetOptions), / /);
    });
  });

  test('17: Image columns become Attachments (TEXT), an image id n the list [n]', () => {
    step('BlobMigrationV16.grist', 17, (m) => {
      const img = rows(m, '_grist_Tables_column').find((c) => c.colId === 'Img')!;
      assert.is(img.type, 'Attachments');
      assert.is(decl(m, 'Table2', 'Img')!.type, 'TEXT');
      const values = m.db.prepare(`SELECT id, Img FROM Table2 ORDER BY id LIMIT 3`).all();
      // Stored 0, 0, 1 (0: no image); BlobMigrationV17, upgraded by Grist then, holds the same lists.
      assert.equal(values, [
        {id: 1, Img: '[]'},
        {id: 2, Img: '[]'},
        {id: 3, Img: '[1]'},
      ]);
    });
  });

  test('18: the timezone of documents made before it is America/New_York', () => {
    step('BlobMigrationV17.grist', 18, (m) => assert.is(rows(m, '_grist_DocInfo')[0].timezone, 'America/New_York'));
  });

  test('20: one page per view, tables by tableId, their other views indented after them', () => {
    step('World-v18.grist', 20, (m) => {
      const pages = rows(m, '_grist_Pages');
      const views = rows(m, '_grist_Views');
      assert.is(pages.length, views.length);
      assert.equal(
        pages.map((p) => p.pagePos),
        pages.map((_p, i) => i + 1),
      );
      const names = pages.filter((p) => !p.indentation).map((p) => String(views.find((v) => v.id === p.viewRef)!.name));
      assert.equal(names, [...names].sort());
    });
  });

  test('23: documentSettings says the locale is en-US', () => {
    step('World-v20.grist', 23, (m) => assert.is(rows(m, '_grist_DocInfo')[0].documentSettings, '{"locale":"en-US"}'));
  });

  test('25: field filters move to _grist_Filters', () => {
    let expected: unknown[] = [];
    step(
      'World-v24.grist',
      25,
      (m) => {
        assert.equal(
          rows(m, '_grist_Filters').map((f) => [f.viewSectionRef, f.colRef, f.filter]),
          expected,
        );
      },
      (m) => {
        expected = rows(m, '_grist_Views_section_field')
          .filter((f) => f.filter)
          .map((f) => [f.parentId, f.colRef, f.filter]);
        assert.ok(expected.length >= 4);
      },
    );
  });

  test('26: every table with a primary view gets a raw section titled as the view, with its visible columns', () => {
    step('World-v25.grist', 26, (m) => {
      const tables = rows(m, '_grist_Tables');
      const sections = new Map(rows(m, '_grist_Views_section').map((s) => [s.id, s]));
      const fields = rows(m, '_grist_Views_section_field');
      const cols = rows(m, '_grist_Tables_column');
      const views = new Set(rows(m, '_grist_Views').map((v) => v.id));
      assert.ok(tables.some((t) => t.rawViewSectionRef));
      for (const t of tables) {
        if (!views.has(Number(t.primaryViewId))) {
          assert.is(t.rawViewSectionRef, 0);
          continue;
        }
        const raw = sections.get(Number(t.rawViewSectionRef))!;
        assert.equal(
          [raw.tableRef, raw.parentId, raw.parentKey, raw.defaultWidth, raw.borderWidth],
          [t.id, 0, 'record', 100, 1],
        );
        const shown = fields
          .filter((f) => f.parentId === raw.id)
          .map((f) => cols.find((c) => c.id === f.colRef)!.colId);
        const visible = cols
          .filter((c) => c.parentId === t.id && !/^(manualSort|gristHelper_)/.test(String(c.colId)))
          .sort((a, b) => Number(a.parentPos) - Number(b.parentPos))
          .map((c) => c.colId);
        assert.equal(shown, visible, String(t.tableId));
      }
    });
  });

  test('28: marshalled Attachments lists become JSON in a TEXT column', () => {
    step('AttachmentsJsonMigration.grist', 28, (m) => {
      const cols = rows(m, '_grist_Tables_column').filter((c) => c.type === 'Attachments');
      assert.ok(cols.length > 0);
      for (const c of cols) {
        const table = String(rows(m, '_grist_Tables').find((t) => t.id === c.parentId)!.tableId);
        assert.is(decl(m, table, String(c.colId))!.type, 'TEXT');
        const blobs = m.db.prepare(`SELECT count(*) FROM "${table}" WHERE typeof("${c.colId}") = 'blob'`).pluck().get();
        assert.is(blobs, 0);
        assert.ok(
          (m.db.prepare(`SELECT count(*) FROM "${table}" WHERE "${c.colId}" LIKE '[%]'`).pluck().get() as number) > 0,
        );
      }
    });
  });

  test('29: conditional rules pointing to another table are dropped, with their rulesOptions', () => {
    step('SummaryRulesBug.grist', 29, (m) => {
      const cols = rows(m, '_grist_Tables_column');
      const byId = new Map(cols.map((c) => [c.id, c]));
      for (const c of cols.filter((x) => x.rules)) {
        const rules = (c.rules as unknown[]).slice(1) as number[];
        assert.ok(
          rules.every((r) => byId.get(r)?.parentId === c.parentId),
          String(c.colId),
        );
      }
      assert.ok(
        cols.some(
          (c) =>
            c.rules === null &&
            !String(c.widgetOptions).includes('rulesOptions') &&
            String(c.widgetOptions).includes('": '),
        ),
      );
    });
  });

  test('30: summary tables get a raw section', () => {
    step('RawSummaryTables.grist', 30, (m) => {
      const summaries = rows(m, '_grist_Tables').filter((t) => t.summarySourceTable);
      assert.ok(summaries.length > 0);
      for (const t of summaries) {
        const s = rows(m, '_grist_Views_section').find((x) => x.id === t.rawViewSectionRef)!;
        assert.equal([s.tableRef, s.parentId, s.parentKey, s.title], [t.id, 0, 'record', '']);
      }
    });
  });

  test('31: GristSummary_ tables renamed <Source>_summary_<colIds>, in formulas and ACL resources too', () => {
    step('ACL-Test.grist', 31, (m) => {
      const t = rows(m, '_grist_Tables').find((x) => x.id === 3)!;
      assert.match(String(t.tableId), /^ClientsTable_summary/);
      assert.ok(m.hasTable(String(t.tableId)) && !m.hasTable('GristSummary_12_ClientsTable'));
      assert.not.ok(rows(m, '_grist_ACLResources').some((r) => String(r.tableId).startsWith('GristSummary_')));
    });
  });

  test('34: filters pinned in raw sections and where the filter bar shows', () => {
    step(
      'World-v33.grist',
      34,
      (m) => {
        const raw = Number(rows(m, '_grist_Tables')[0].rawViewSectionRef);
        const pinned = rows(m, '_grist_Filters').map((f) => [f.viewSectionRef, f.pinned]);
        assert.equal(pinned.slice(-2), [
          [raw, true],
          [9999, false],
        ]);
        const raws = new Set(rows(m, '_grist_Tables').map((t) => t.rawViewSectionRef));
        assert.ok(pinned.every(([s, p]) => !raws.has(s) || p === true));
      },
      (m) => {
        const raw = Number(rows(m, '_grist_Tables')[0].rawViewSectionRef);
        m.insert('_grist_Filters', null, {viewSectionRef: raw, colRef: 1, filter: '{}'});
        m.insert('_grist_Filters', null, {viewSectionRef: 9999, colRef: 1, filter: '{}'});
      },
    );
  });

  test('35: comments in parsed ACL formulas become memos', () => {
    step('Memos-v34.grist', 35, (m) => {
      const memos = rows(m, '_grist_ACLRules')
        .map((r) => r.memo)
        .filter(Boolean);
      assert.ok(memos.includes('A memo that comes before the formula.'));
      assert.ok(memos.includes('A memo that comes after the formula.'));
    });
  });

  test('39: existing webhook triggers are enabled', () => {
    step(
      'World-v33.grist',
      39,
      (m) => {
        assert.equal(
          rows(m, '_grist_Triggers').map((t) => [t.enabled, t.memo, t.label]),
          [[true, '', '']],
        );
        assert.ok(m.hasColumn('_grist_Views_section', 'description'));
      },
      (m) => {
        m.insert('_grist_Triggers', null, {tableRef: 1, actions: '[]'});
      },
    );
  });

  test('40: every non-summary table with a raw section gets a record card section', () => {
    step('World-v39.grist', 40, (m) => {
      for (const t of rows(m, '_grist_Tables').filter((x) => !x.summarySourceTable)) {
        const s = rows(m, '_grist_Views_section').find((x) => x.id === t.recordCardViewSectionRef)!;
        assert.equal([s.tableRef, s.parentId, s.parentKey], [t.id, 0, 'single']);
        assert.ok(rows(m, '_grist_Views_section_field').some((f) => f.parentId === s.id));
      }
    });
  });

  test('45: cell comment times and resolved move out of the JSON content (ms to s)', () => {
    step('Comments_44.grist', 45, (m) => {
      const cells = rows(m, '_grist_Cells');
      assert.equal([cells[0].timeCreated, cells[0].timeUpdated, cells[0].resolved], [1764665900, 0, false]);
      assert.equal(JSON.parse(String(cells[0].content)), {
        userName: 'You',
        sectionId: 1,
        text: 'Comment',
        mentions: [],
      });
      assert.not.match(String(cells[1].content), /time/);
    });
  });

  test('38 changes nothing', () => {
    let before = '';
    // Tables, their columns and row counts (schemaVersion, a value, is the only change).
    const snapshot = (m: MigrationDb) =>
      JSON.stringify(
        m.tableNames().map((t) => [t, m.columnInfo(t), m.db.prepare(`SELECT count(*) FROM "${t}"`).pluck().get()]),
      );
    step(
      'Currencies.grist',
      38,
      (m) => assert.is(snapshot(m), before),
      (m) => {
        before = snapshot(m);
      },
    );
  });

  test('import: the oldest document (no schemaVersion column) imports upgraded; a failing step refuses the import', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gl-mig-engine-'));
    const engine = await Engine.open({dataDir: dir});
    try {
      const user = await engine.home.ensureUser('chimpy@getgrist.com', 'Chimpy');
      const owner = await engine.home.authenticate(`Bearer ${await engine.home.setApiKey(user.id)}`);
      const ws = (await engine.home.listWorkspaces(`docs-${user.id}`, owner, null, false)) as Array<{
        id: number;
        name: string;
      }>;
      const wid = ws.find((w) => w.name === 'Home')!.id;
      const res = await importUpload(engine, wid, owner, {
        fileName: 'World-v0.grist',
        data: readFileSync(fixture('World-v0.grist')),
      });
      const doc = engine.openDoc(res.id).grist;
      assert.is(doc.schemaVersion, 46);
      assert.is(doc.fetchRecords('City', {limit: 1}).records[0].fields.Name, 'Kabul');
      assert.equal(doc.addRecords('City', [{Name: 'Nowhere'}]), [4080]);

      const broken = copyTo(fixture('ACL-Test.grist'), 'broken.grist');
      const db = new Database(broken);
      db.prepare(`UPDATE _grist_Tables SET summarySourceTable = 99 WHERE id = 3`).run();
      db.close();
      const files = readdirSync(join(dir, 'docs')).length;
      try {
        await importUpload(engine, wid, owner, {fileName: 'broken.grist', data: readFileSync(broken)});
        assert.unreachable('accepted');
      } catch (e: any) {
        assert.is(e.status, 400);
        assert.match(e.message, /schema version 30 failed at schema version 31/);
      }
      assert.is(readdirSync(join(dir, 'docs')).length, files, 'no document file left behind');
    } finally {
      await engine.close();
      rmSync(dir, {recursive: true, force: true});
    }
  });

  test("storage steps reproduce Grist's own upgraded files (sqlite3 .dump of BlobMigrationV9, DefaultValuesV9)", () => {
    let cli = true;
    try {
      execFileSync('sqlite3', ['-version']);
    } catch {
      cli = false;
    }
    if (!cli) {
      // .ci/run installs Debian's sqlite3 package: under CI a missing command is a failure.
      if (underCi()) assert.unreachable("no sqlite3 command (.ci/run installs Debian's sqlite3 package)");
      console.log('SKIPPED (no sqlite3 command)');
      return;
    }
    const pairs = [
      ...[1, 2, 3, 4, 5, 6, 7, 8].map((v) => [`BlobMigrationV${v}.grist`, 'BlobMigrationV9.grist']),
      ...[5, 6, 7, 8].map((v) => [`DefaultValuesV${v}.grist`, 'DefaultValuesV9.grist']),
    ];
    for (const [from, to] of pairs) {
      const path = copyTo(fixture(from), from);
      const db = new Database(path);
      db.transaction(() => runSteps(db, {schema: schemaOf(path)}))();
      db.close();
      const dump = (p: string) => execFileSync('sqlite3', [p, '.dump'], {maxBuffer: 64 << 20}).toString();
      assert.ok(dump(path) === dump(fixture(to)), `${from} upgraded dumps as ${to}`);
    }
  });

  test('metadata upgraded here equals what Grist upgraded: CC_Summaries-v2 to 6, World-v24 to 25', () => {
    // Rungs saved by Grist right after its own migrations (no edits in between).
    const metaRows = (db: Database.Database) => {
      const tables = db
        .prepare(
          `SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '\\_grist\\_%' ESCAPE '\\' ORDER BY name`,
        )
        .pluck()
        .all() as string[];
      return Object.fromEntries(
        tables.map((t) => [
          t,
          JSON.stringify(db.prepare(`SELECT * FROM "${t}" ORDER BY id`).all(), (k, v) =>
            k === 'schemaVersion' ? undefined : typeof v === 'bigint' ? Number(v) : v,
          ),
        ]),
      );
    };
    for (const [from, to, version] of [
      ['CC_Summaries-v2.grist', 'CC_Summaries-v6.grist', 6],
      ['World-v24.grist', 'World-v25.grist', 25],
    ] as const) {
      const db = new Database(copyTo(fixture(from), from));
      db.transaction(() =>
        runSteps(db, {schema: version, storage: Number(db.pragma('user_version', {simple: true}))}),
      )();
      const ref = new Database(fixture(to), {readonly: true});
      assert.equal(metaRows(db), metaRows(ref), `${from} upgraded to ${version} = ${to}`);
      db.close();
      ref.close();
    }
  });

  test('a failing step rolls everything back: the file is unchanged, the error names versions and step', () => {
    const path = copyTo(fixture('ACL-Test.grist'), 'broken.grist');
    const db = new Database(path);
    db.prepare(`UPDATE _grist_Tables SET summarySourceTable = 99 WHERE id = 3`).run();
    db.close();
    const hash = () => createHash('sha256').update(readFileSync(path)).digest('hex');
    const before = hash();
    assert.throws(
      () => GristDoc.open(path),
      (e: Error & {status?: number}) =>
        e.status === 400 &&
        /schema version 30 failed at schema version 31 \(summary tables renamed/.test(e.message) &&
        /no source table/.test(e.message),
    );
    assert.throws(() => upgradeDocFile(path), /schema version 31/);
    assert.is(hash(), before);
    const doc = GristDoc.open(path, {readonly: true});
    assert.is(doc.schemaVersion, 30);
    doc.close();
  });

  test('a SQLite file that is not a Grist document is never upgraded (nor changed) by an open', () => {
    const path = copyTo(fixture('Hello.grist'), 'plain.sqlite');
    const db = new Database(path);
    for (const t of db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all() as string[]) {
      db.exec(`DROP TABLE "${t}"`);
    }
    db.exec(
      `CREATE TABLE foo (id INTEGER PRIMARY KEY, x REAL DEFAULT 2147483647); INSERT INTO foo (x) VALUES (1.5); PRAGMA user_version = 0`,
    );
    db.close();
    const before = createHash('sha256').update(readFileSync(path)).digest('hex');
    assert.throws(() => GristDoc.open(path));
    assert.is(upgradeDocFile(path), null);
    assert.is(createHash('sha256').update(readFileSync(path)).digest('hex'), before);
  });

  test('a document newer than 46 opens read-only, refuses writes naming both versions, and is never written', () => {
    const path = copyTo(fixture('DownmigrateTest.grist'), 'newer.grist');
    const hash = () => createHash('sha256').update(readFileSync(path)).digest('hex');
    const before = hash();
    const doc = GristDoc.open(path);
    assert.is(doc.schemaVersion, 999999);
    assert.not.ok(doc.isWritable);
    const table = doc.listTables()[0].id;
    assert.ok(doc.fetchRecords(table).records.length >= 0);
    assert.throws(
      () => doc.addRecords(table, [{}]),
      /schema version 999999, newer than gristlite's 46: it is served read-only/,
    );
    assert.throws(() => doc.addTables([{columns: [{}]}]), /999999.*46/);
    doc.close();
    assert.is(upgradeDocFile(path), null);
    assert.is(hash(), before);
  });

  test('after the upgrade every metadata table of schema 46 has every column (World-v0, the oldest)', () => {
    const path = copyTo(fixture('World-v0.grist'), 'w.grist');
    const res = upgradeDocFile(path)!;
    assert.equal(res.from, {storage: 1, schema: 0});
    assert.equal(res.to, {storage: 9, schema: 46});
    assert.is(res.steps.length, 8 + 46);
    const m = new MigrationDb(new Database(path, {readonly: true}));
    for (const [t, types] of Object.entries(META_TYPES)) {
      assert.equal(
        m
          .columnInfo(t)
          .map((c) => c.name)
          .filter((c) => c in types)
          .sort(),
        Object.keys(types).sort(),
        t,
      );
    }
    m.db.close();
  });
}

test.run();
