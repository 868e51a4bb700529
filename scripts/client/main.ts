/** `npm run client:generate`: renders the client's generated files from an in-process API's OpenAPI document. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setupRun, teardownRun } from '../../test/support/context.js';
import { startCustomApp } from '../../test/support/spine.js';
import { renderClientFiles } from './generate.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../libs/client');
await setupRun();
const app = await startCustomApp();
try {
  const doc = (await (await fetch(`${app.base}/openapi.json`)).json()) as never;
  for (const [file, text] of Object.entries(await renderClientFiles(doc))) {
    writeFileSync(path.join(root, file), text);
    process.stdout.write(`wrote libs/client/${file}\n`);
  }
} finally {
  await app.close();
  await teardownRun();
}
