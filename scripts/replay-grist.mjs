#!/usr/bin/env node
// Replays Grist's recorded answers (packages/conformance/golden) against a fresh in-process
// gristlite and prints every difference: step, JSON path, both values (as the `recorded`
// conformance area compares them). All scenarios run, in order; only those named are printed.
//   node scripts/replay-grist.mjs [scenario ...]
process.env.GRISTLITE_LOG_LEVEL ??= 'warn';
const {replayScenarios} = await import('@gristlite/conformance/recorded');
const only = process.argv.slice(2);
let total = 0;
for (const [name, {steps, lines}] of Object.entries(await replayScenarios())) {
  if (only.length && !only.includes(name)) continue;
  total += lines.length;
  console.log(`${name}: ${steps} steps, ${lines.length} difference(s)`);
  for (const l of lines) console.log(l);
}
console.log(`${total} difference(s)`);
process.exitCode = total ? 1 : 0;
