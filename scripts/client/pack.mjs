#!/usr/bin/env node
/**
 * `npm run client:pack [-- --out DIR]`: @lectern/client as an installable npm tarball (docs/client.md "Installing it
 * elsewhere"): libs/client compiled to JavaScript with its type declarations, a package.json whose exports name
 * both, openapi-fetch as the one dependency. Prints the tarball's path. Runs on a fresh clone (no build needed).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync, copyFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const lib = path.join(root, 'libs/client');
const outFlag = process.argv.indexOf('--out');
const out = path.resolve(outFlag > 0 ? process.argv[outFlag + 1] : path.join(root, 'dist'));
const stage = path.join(out, 'client-package');

rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
// The package's own compile: the repository's compiler settings, declarations on, only the client's files.
const project = path.join(out, 'client-package.tsconfig.json');
writeFileSync(
  project,
  JSON.stringify({
    extends: path.join(root, 'tsconfig.json'),
    compilerOptions: {
      outDir: stage,
      rootDir: path.join(lib, 'src'),
      declaration: true,
      sourceMap: false,
      typeRoots: [path.join(root, 'node_modules/@types')],
    },
    include: [],
    files: ['src/index.ts', 'src/webhooks.ts'].map((f) => path.join(lib, f)),
  }),
);
try {
  execFileSync(process.execPath, [tsc, '-p', project], { cwd: root, stdio: 'inherit' });
} finally {
  rmSync(project, { force: true });
}

const src = JSON.parse(readFileSync(path.join(lib, 'package.json'), 'utf8'));
const entry = (name) => ({ types: `./${name}.d.ts`, default: `./${name}.js` });
writeFileSync(
  path.join(stage, 'package.json'),
  JSON.stringify(
    {
      name: src.name,
      version: src.version,
      description: src.description,
      type: 'module',
      exports: { '.': entry('index'), './webhooks': entry('webhooks') },
      types: './index.d.ts',
      engines: src.engines,
      dependencies: src.dependencies,
      license: 'UNLICENSED',
    },
    null,
    2,
  ) + '\n',
);
if (existsSync(path.join(lib, 'README.md')))
  copyFileSync(path.join(lib, 'README.md'), path.join(stage, 'README.md'));
else copyFileSync(path.join(root, 'docs/client.md'), path.join(stage, 'README.md'));
const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', out], { cwd: stage })
  .toString()
  .trim()
  .split('\n')
  .pop();
process.stdout.write(`${path.join(out, name)}\n`);
