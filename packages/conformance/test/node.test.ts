// The conformance suite against the Node adapter, served by `gristlite serve` on a free port.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@gristlite/cli';
import { runConformance } from '../src/index.js';

const only = process.env.GRISTLITE_CONFORMANCE_ONLY?.split(',').filter(Boolean);

runConformance(
  {
    name: 'node',
    async start(env) {
      const dataDir = mkdtempSync(join(tmpdir(), 'gl-conf-node-'));
      const served = await serve({ dataDir, port: 0, host: '127.0.0.1', env });
      return {
        url: served.url,
        engine: served.engine,
        async close() {
          await served.close();
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    },
  },
  only,
);
