#!/usr/bin/env node
// Committed so that pnpm links the `gristlite` command at install time, before the build exists.
import('../dist/src/main.js').catch((e) => {
  if (e && e.code === 'ERR_MODULE_NOT_FOUND') console.error('gristlite: not built yet; run `pnpm build` first');
  else console.error(e);
  process.exitCode = 1;
});
