/**
 * `npx lectern` speed depends on where the bin lives: when the repository's root package declares it, npm
 * loads the whole dependency tree (~700 packages, 1.4 s) before every call; as the bin of the apps/cli
 * workspace, `npm ci` links it into node_modules/.bin and `npx` runs it at once (README "The admin command").
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const root = path.resolve(import.meta.dirname, '../../..');
const run = promisify(execFile);

describe('the lectern bin', () => {
  it('is the apps/cli workspace bin, not the root package one', async () => {
    const rootPkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { bin?: unknown };
    expect(rootPkg.bin, 'a root bin makes npx load the whole tree first').to.equal(undefined);
    const cliPkg = JSON.parse(await readFile(path.join(root, 'apps/cli/package.json'), 'utf8')) as {
      bin?: Record<string, string>;
    };
    expect(cliPkg.bin).to.deep.equal({ lectern: 'bin/lectern.js' });
  });

  it('is linked into node_modules/.bin by npm ci and starts the built command (or says to build it)', async () => {
    const linked = await realpath(path.join(root, 'node_modules/.bin/lectern'));
    expect(linked).to.equal(path.join(root, 'apps/cli/bin/lectern.js'));
    const answer = await run(process.execPath, [linked, '--help']).then(
      (r) => r.stdout,
      (e: { stderr: string }) => e.stderr,
    );
    expect(answer).to.match(/lectern — Lectern admin command|not built yet; run `npm run build`/);
  });
});
