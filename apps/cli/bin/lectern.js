#!/usr/bin/env node
// The `lectern` bin of the repository (linked into node_modules/.bin by `npm ci`, so `npx lectern` runs it
// without npm loading the whole dependency tree first). It starts the built command; `npm run build` makes it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../../../dist/apps/cli/src/main.js', import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  process.stderr.write(
    'lectern: the command is not built yet; run `npm run build` (or `make start`) first\n',
  );
  process.exit(1);
}
await import(main.href);
