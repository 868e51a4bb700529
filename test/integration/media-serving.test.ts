import { expect } from 'chai';
import { makeWorkspace, startTestApp, type TestApp } from '../support/context.js';
import { api, expectStatus } from '../support/authoring.js';
import { anonymousId, playerApi, publishedCourse } from '../support/player.js';
import { pngOf, uploadForm } from '../support/media.js';
import type { OpenRunResult } from '@lectern/contracts';

describe('media: serving media:// references to learners (docs/media.md "Serving")', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ MEDIA_URL_TTL_SECONDS: '5' });
  });
  after(async () => app?.close());
  const em = () => app.rt.orm.em.fork();

  it('an opened run gets a short-lived signed address for its own image; another workspace’s id, a deleted one and an https URL are not signed', async () => {
    const ws = await makeWorkspace(em(), 'build');
    const other = await makeWorkspace(em(), 'build');
    const png = await pngOf(40, 30);
    const mine = (await uploadForm(app.base, ws.key, { file: { bytes: png } })).body.data;
    const gone = (await uploadForm(app.base, ws.key, { file: { bytes: await pngOf(5, 5) } })).body.data;
    const theirs = (await uploadForm(app.base, other.key, { file: { bytes: await pngOf(6, 6) } })).body.data;
    expectStatus(await api(app.base, ws.key)('DELETE', `/media/${gone.id}`), 204);
    const blocks = [
      { id: 'b1', type: 'image', url: mine.url, alt: 'Mine' },
      { id: 'b2', type: 'image', url: theirs.url, alt: 'Theirs' },
      { id: 'b3', type: 'image', url: gone.url, alt: 'Gone' },
      { id: 'b4', type: 'image', url: 'https://example.com/a.png', alt: 'External' },
    ];
    const courseId = await publishedCourse(app.base, ws.key, { screens: [{ id: 's1', title: 'S', blocks }] });
    const res = await playerApi(app.url)<OpenRunResult>('POST', '/runs', {
      body: { courseId, anonymousId: anonymousId(7) },
    });
    expect(res.status, res.text).to.be.oneOf([200, 201]);
    const served = (res.body.data.course.screens[0]!.blocks as unknown as { url: string }[]).map(
      (b) => b.url,
    );
    expect(served[0]).to.match(/^http:\/\/127\.0\.0\.1:\d+\/.+X-Amz-Signature=/);
    const got = await fetch(served[0]!);
    expect(got.status).to.equal(200);
    expect(got.headers.get('content-type')).to.equal('image/png');
    expect(Buffer.from(await got.arrayBuffer()).equals(png)).to.equal(true);
    expect(served[1]).to.equal(theirs.url);
    expect(served[2]).to.equal(gone.url);
    expect(served[3]).to.equal('https://example.com/a.png');
    // A tampered signature gets nothing.
    const tampered = served[0]!.replace(
      /(X-Amz-Signature=)([0-9a-f])/,
      (_m, p: string, c: string) => p + (c === 'a' ? 'b' : 'a'),
    );
    expect((await fetch(tampered)).status).to.equal(403);
  });
});
