#!/usr/bin/env node
/**
 * Makes the compiled tree resolve the workspace packages. In the sources, `@lectern/<name>` resolves through
 * node_modules to `<libs|apps>/<name>/src/index.ts` (tsx runs it in development and tests). Node cannot run
 * TypeScript, so the build writes `dist/node_modules/@lectern/<name>`: a package.json whose exports point at the
 * compiled entry. Node looks for node_modules from the importing file upwards, so everything under dist/ finds
 * these before the root node_modules. Run after `tsc -p tsconfig.build.json` (npm run build does).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const scope = path.join(dist, 'node_modules', '@lectern');
rmSync(scope, { recursive: true, force: true });
let count = 0;
for (const kind of ['libs', 'apps']) {
  for (const name of readdirSync(path.join(root, kind))) {
    const manifest = path.join(root, kind, name, 'package.json');
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
    if (!pkg.exports) continue;
    // `exports` is "./src/index.ts" or a map of subpaths ({".": "./src/index.ts", "./ids": "./src/ids.ts"}).
    const map = typeof pkg.exports === 'string' ? { '.': pkg.exports } : pkg.exports;
    const dir = path.join(scope, name);
    mkdirSync(dir, { recursive: true });
    const exportsOut = {};
    for (const [sub, target] of Object.entries(map)) {
      const entry = path.join(dist, kind, name, target.replace(/\.ts$/, '.js'));
      if (!existsSync(entry))
        throw new Error(`${pkg.name}: ${path.relative(root, entry)} is missing; run tsc first`);
      // `exports` targets must stay inside the package, so each subpath is a one-line re-export of its entry.
      const file = sub === '.' ? 'index.js' : `${sub.slice(2).replace(/\//g, '-')}.js`;
      const rel = path.relative(dir, entry).split(path.sep).join('/');
      writeFileSync(path.join(dir, file), `export * from '${rel}';\n`);
      exportsOut[sub] = `./${file}`;
    }
    writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: pkg.name, private: true, type: 'module', exports: exportsOut }, null, 2) + '\n',
    );
    count++;
  }
}
process.stdout.write(`dist: ${count} workspace packages linked under dist/node_modules/@lectern\n`);
