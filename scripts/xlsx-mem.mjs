// Memory of a 1M-row xlsx download (after pnpm build): node --expose-gc scripts/xlsx-mem.mjs [rows]
import {createWriteStream, rmSync, statSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {GristDoc} from '../packages/core/dist/src/index.js';
import {xlsxStream} from '../packages/http/dist/src/routes/xlsx.js';
const rows = Number(process.argv[2] ?? 1_000_000);
const path = `${tmpdir()}/big-${process.pid}.grist`;
const doc = GristDoc.create(path);
doc.addTables([
  {
    id: 'Big',
    columns: [
      {id: 'Name', fields: {type: 'Text'}},
      {id: 'N', fields: {type: 'Int'}},
      {id: 'X', fields: {type: 'Numeric'}},
    ],
  },
]);
const ins = doc.db.prepare('INSERT INTO Big (id, manualSort, Name, N, X) VALUES (?, ?, ?, ?, ?)');
doc.db.transaction(() => {
  for (let i = 1; i <= rows; i++) ins.run(i, i, `name ${i % 5000}`, i, i / 7);
})();
global.gc?.();
const before = process.memoryUsage().rss;
let peak = before;
const timer = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 50);
const t0 = Date.now();
const out = createWriteStream(`${tmpdir()}/big-${process.pid}.xlsx`);
for await (const chunk of xlsxStream(doc.db, ['Big'], 'label')) {
  if (!out.write(chunk)) await new Promise((r) => out.once('drain', r));
}
await new Promise((r) => out.end(r));
clearInterval(timer);
peak = Math.max(peak, process.memoryUsage().rss);
const size = statSync(`${tmpdir()}/big-${process.pid}.xlsx`).size;
console.log(
  `${rows} rows: ${((Date.now() - t0) / 1000).toFixed(1)} s, xlsx ${(size / 1e6).toFixed(1)} MB, RSS before ${(before / 1e6).toFixed(0)} MB, peak ${(peak / 1e6).toFixed(0)} MB`,
);
doc.close();
rmSync(path, {force: true});
rmSync(`${tmpdir()}/big-${process.pid}.xlsx`, {force: true});
