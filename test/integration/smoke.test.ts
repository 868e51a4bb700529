import { expect } from 'chai';
import { startTestApp, makeWorkspace, type TestApp, type TestWorkspace } from '../support/context.js';
import { call } from '../support/http.js';

describe('smoke: the API over a real port', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  before(async () => {
    app = await startTestApp();
    ws = await makeWorkspace(app.rt.orm.em.fork(), 'build', 'Smoke');
  });
  after(async () => app?.close());

  it('GET /me answers the workspace, unwrapped', async () => {
    const res = await call(app.base, 'GET', '/me', { key: ws.key });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      workspace_id: ws.id,
      workspace_name: 'Smoke',
      plan: 'build',
      key_scope: 'write',
      generations_used: 0,
      generations_allowance: 100,
      storageBytes: 0,
      storageLimitBytes: 50 * 1024 ** 3,
    });
    expect(res.headers.get('x-request-id')).to.be.a('string');
  });
});
