// The API console in a real browser: Debian's Chromium driven by playwright-core (which never
// downloads a browser here), against `gristlite serve` on loopback.
import {existsSync, mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {underCi} from '@gristlite/core/testing';
import {startWorld, type World} from '@gristlite/conformance';
import {nodeTarget} from './target.js';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

if (!existsSync(CHROMIUM)) {
  test('API console in Chromium', () => {
    if (underCi()) assert.unreachable(`no Chromium at ${CHROMIUM}: .ci/run installs Debian's chromium package`);
    console.log(`SKIPPED (no Chromium at ${CHROMIUM})`);
  });
} else {
  test('API console in Chromium: lists the operations, authorizes with a key, tries GET /api/orgs', async () => {
    const {chromium} = await import('playwright-core');
    const profile = mkdtempSync(join(tmpdir(), 'gl-chromium-'));
    let world: World | undefined;
    let context: Awaited<ReturnType<typeof chromium.launchPersistentContext>> | undefined;
    try {
      world = await startWorld(nodeTarget());
      const base = world.server.url.replace(/\/$/, '');
      context = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: ARGS,
        timeout: 60_000,
      });
      context.setDefaultTimeout(30_000);
      const page = context.pages()[0] ?? (await context.newPage());
      const elsewhere: string[] = [];
      const problems: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith(`${base}/`) && !r.url().startsWith('data:')) elsewhere.push(r.url());
      });
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(String(e)));

      const res = await page.goto(`${base}/apiconsole`);
      assert.is(res?.status(), 200);
      assert.is(await page.title(), 'gristlite API console');

      // Every operation of the document is listed (Swagger UI ids: operations-<tag>-<operationId>).
      const doc = (await world.api.get('/api/openapi.json')).body as {paths: Record<string, Record<string, unknown>>};
      const operations = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
      await page.waitForSelector('.opblock');
      assert.is(await page.locator('.opblock').count(), operations);
      const orgs = page.locator('#operations-orgs-getApiOrgs');
      assert.match(await orgs.locator('.opblock-summary').innerText(), /GET\s*\/api\/orgs/);

      // Authorize with the key (the OpenAPI document's bearer scheme).
      await page.click('.auth-wrapper button.authorize');
      const dialog = page.locator('.dialog-ux');
      await dialog.locator('input').first().fill(world.chimpy.key);
      await dialog.locator('.auth-btn-wrapper button.authorize').click();
      await dialog.locator('button.btn-done').click();

      // Try it out: GET /api/orgs.
      await orgs.locator('.opblock-summary').click();
      await orgs.locator('.try-out__btn').click();
      const sent = page.waitForRequest((r) => r.url() === `${base}/api/orgs`);
      await orgs.locator('button.execute').click();
      assert.is((await sent).headers().authorization, `Bearer ${world.chimpy.key}`);
      const body = orgs.locator('.live-responses-table tr.response .response-col_description .microlight').first();
      await body.waitFor();
      const shown = JSON.parse(await body.innerText()) as {id: number; owner: {id: number} | null}[];
      const expected = (await world.api.get('/api/orgs', world.chimpy.as)).body as {id: number}[];
      assert.ok(expected.length > 0);
      assert.equal(shown.map((o) => o.id).sort(), expected.map((o) => o.id).sort());
      assert.ok(
        shown.some((o) => o.owner?.id === world!.chimpy.id),
        "the personal org of the key's user",
      );
      assert.match(
        await orgs.locator('.live-responses-table tr.response .response-col_status').first().innerText(),
        /^200/,
      );

      assert.equal(elsewhere, [], 'nothing is loaded from another host');
      assert.equal(problems, [], 'no script errors (nor Content-Security-Policy refusals)');
    } finally {
      await context?.close();
      await world?.server.close();
      rmSync(profile, {recursive: true, force: true});
    }
  });
}

test.run();
