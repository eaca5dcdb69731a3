// Issue 24: 800 documents created and written through the API by a server under `ulimit -n 512`.
import {spawn} from 'node:child_process';
import {mkdtempSync, readdirSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {callApi, MAIN} from './servers.js';

test('a server under 512 descriptors serves 800 new documents and stays under 400 descriptors', async () => {
  const data = mkdtempSync(join(tmpdir(), 'gl-fds-'));
  const key = 'f'.repeat(40);
  const proc = spawn('bash', ['-c', `ulimit -n 512 && exec "${process.execPath}" "${MAIN}" serve --port 0`], {
    env: {...process.env, GRISTLITE_DATA_DIR: data, GRISTLITE_API_KEY: key, GRISTLITE_LOG_LEVEL: 'warn'},
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      proc.stdout!.on('data', (d) => {
        out += d;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      proc.once('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
    });
    const fds = () => readdirSync(`/proc/${proc.pid}/fd`).length;
    const org = (await callApi(url, key, 'GET', '/api/orgs')).json[0].id;
    const ws = (await callApi(url, key, 'GET', `/api/orgs/${org}/workspaces`)).json[0].id;
    const failures: string[] = [];
    const ids: string[] = [];
    let most = 0;
    for (let i = 0; i < 800; i++) {
      const c = await callApi(url, key, 'POST', `/api/workspaces/${ws}/docs`, {name: `d${i}`});
      if (c.status !== 200) {
        failures.push(`create ${i}: ${c.status} ${JSON.stringify(c.json)}`);
        continue;
      }
      ids.push(c.json);
      const w = await callApi(url, key, 'POST', `/api/docs/${c.json}/tables/Table1/records`, {
        records: [{fields: {A: i}}],
      });
      if (w.status !== 200) failures.push(`write ${i}: ${w.status} ${JSON.stringify(w.json)}`);
      if (i % 10 === 0) most = Math.max(most, fds());
    }
    assert.equal(failures.slice(0, 5), []);
    const first = await callApi(url, key, 'GET', `/api/docs/${ids[0]}/tables/Table1/records`);
    assert.equal(first.json.records[0].fields.A, 0);
    const sql = await callApi(
      url,
      key,
      'GET',
      `/api/docs/${ids[0]}/sql?q=${encodeURIComponent('select A from Table1')}`,
    );
    assert.equal(sql.status, 200, JSON.stringify(sql.json));
    most = Math.max(most, fds());
    console.log(`  ulimit -n 512: 800 documents served, at most ${most} descriptors open`);
    assert.ok(most < 400, `${most} descriptors`);
  } finally {
    proc.kill();
    rmSync(data, {recursive: true, force: true});
  }
});

test.run();
