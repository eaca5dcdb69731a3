#!/usr/bin/env node
import {exitCodeFor, run} from './cli.js';

run(process.argv.slice(2), process.env).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (e) => {
    console.error(`gristlite: ${e instanceof Error ? e.message : e}`);
    process.exitCode = exitCodeFor(e);
  },
);
