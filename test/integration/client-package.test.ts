/**
 * @lectern/client as others install it (`npm run client:pack`, docs/client.md "Installing it elsewhere"): the
 * tarball holds compiled JavaScript and type declarations; a plain Node project (no TypeScript tooling) imports it
 * and calls the service, and a TypeScript project type-checks against its declarations.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { makeWorkspace, startTestApp, type TestApp, type TestWorkspace } from '../support/context.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

describe('client: the packed @lectern/client in a project of its own', function () {
  this.timeout(180_000);
  let app: TestApp;
  let ws: TestWorkspace;
  let dir: string;

  before(async () => {
    app = await startTestApp();
    ws = await makeWorkspace(app.rt.orm.em.fork(), 'build', 'Packed client');
    dir = await mkdtemp(path.join(os.tmpdir(), 'lectern-client-pack-'));
    const { stdout } = await run(process.execPath, [
      path.join(root, 'scripts/client/pack.mjs'),
      '--out',
      dir,
    ]);
    const tarball = stdout.trim().split('\n').pop()!;
    // The project: the tarball unpacked where npm would put it, its one dependency beside it.
    const project = path.join(dir, 'project');
    await mkdir(path.join(project, 'node_modules/@lectern/client'), { recursive: true });
    await run('tar', [
      'xzf',
      tarball,
      '-C',
      path.join(project, 'node_modules/@lectern/client'),
      '--strip-components=1',
    ]);
    for (const dep of ['openapi-fetch', 'openapi-typescript-helpers'])
      await symlink(path.join(root, 'node_modules', dep), path.join(project, 'node_modules', dep));
    await writeFile(path.join(project, 'package.json'), '{"type":"module","private":true}\n');
  });
  after(async () => {
    await app?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('plain Node imports the compiled client and its webhooks entry, and calls the service', async () => {
    const project = path.join(dir, 'project');
    await writeFile(
      path.join(project, 'main.mjs'),
      `import { LecternClient, LecternError } from '@lectern/client';
import { verifyWebhook } from '@lectern/client/webhooks';
const lectern = new LecternClient({ baseUrl: process.argv[2], apiKey: process.argv[3] });
const me = await lectern.getWorkspace();
let code = null;
try { await lectern.getCourse({ params: { id: 'crs_missing' } }); } catch (err) { code = err instanceof LecternError ? err.code : String(err); }
console.log(JSON.stringify({ plan: me.plan, code, verify: typeof verifyWebhook }));
`,
    );
    const { stdout } = await run(process.execPath, ['main.mjs', app.url, ws.key], { cwd: project });
    expect(JSON.parse(stdout)).to.deep.equal({ plan: 'build', code: 'not_found', verify: 'function' });
  });

  it('TypeScript type-checks a consumer against the shipped declarations (and catches a wrong call)', async () => {
    const project = path.join(dir, 'project');
    const tsconfig = {
      compilerOptions: {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        typeRoots: [path.join(root, 'node_modules/@types')],
        types: ['node'],
      },
      files: ['consumer.ts'],
    };
    await writeFile(path.join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
    const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
    await writeFile(
      path.join(project, 'consumer.ts'),
      `import { LecternClient } from '@lectern/client';
const lectern = new LecternClient({ baseUrl: 'http://localhost:8080', apiKey: 'lk_x' });
export async function plan(): Promise<string> {
  const me = await lectern.getWorkspace();
  return me.plan;
}
`,
    );
    await run(process.execPath, [tsc, '-p', project], { cwd: project });
    await writeFile(
      path.join(project, 'consumer.ts'),
      `import { LecternClient } from '@lectern/client';
const lectern = new LecternClient({ baseUrl: 'http://localhost:8080', apiKey: 'lk_x' });
export const wrong: number = (await lectern.getWorkspace()).plan;
`,
    );
    const refused = await run(process.execPath, [tsc, '-p', project], { cwd: project }).then(
      () => '',
      (e: { stdout: string }) => e.stdout,
    );
    expect(refused).to.match(/consumer\.ts.*error TS2322/);
  });
});
