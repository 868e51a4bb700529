import { expect } from 'chai';
import {
  makeWorkspace,
  startTestApp,
  startTestWorkers,
  type TestApp,
  type TestWorkers,
} from '../support/context.js';
import { api, expectStatus } from '../support/authoring.js';
import { call } from '../support/http.js';
import { anonymousId, playerApi, publishedCourse } from '../support/player.js';
import { avSample, pngOf, processedMedia, uploadForm } from '../support/media.js';
import { configOf } from '../support/scorm.js';
import { buildPlayerOnce } from '../support/player-browser.js';
import { runJobWorker } from '@lectern/jobs';
import { mediaProcessJob } from '@lectern/media';
import type { MediaDto, OpenRunResult } from '@lectern/contracts';

type Served = Record<string, unknown>;

describe('media: serving media:// references to learners (docs/media.md "Serving")', () => {
  let app: TestApp;
  let workers: TestWorkers;
  before(async () => {
    // The shortest signature the settings allow: the expiry test waits it out.
    const assets = await buildPlayerOnce();
    app = await startTestApp({ MEDIA_URL_TTL_SECONDS: '5', PLAYER_ASSETS_DIR: assets.dir });
    workers = await startTestWorkers('media', (rt) =>
      runJobWorker(rt, mediaProcessJob({ storage: rt.storage })),
    );
  });
  after(async () => {
    await workers?.stop();
    await app?.close();
  });
  const em = () => app.rt.orm.em.fork();

  const upload = async (key: string, bytes: Buffer): Promise<MediaDto> => {
    const res = await uploadForm(app.base, key, { file: { bytes } });
    expectStatus(res, 201);
    return res.body.data;
  };
  const openRun = async (courseId: string, n: number) => {
    const res = await playerApi(app.url)<OpenRunResult>('POST', '/runs', {
      body: { courseId, anonymousId: anonymousId(n) },
    });
    expect(res.status, res.text).to.be.oneOf([200, 201]);
    return res.body.data.course.screens[0]!.blocks as unknown as Served[];
  };
  /** The learner copy the authors' preview page boots the player with. */
  const previewBlocks = async (key: string, courseId: string) => {
    const made = await api(app.base, key)<{ url: string }>('POST', `/courses/${courseId}/preview`);
    expectStatus(made, 200);
    const u = new URL(made.body.data.url);
    const page = await call(app.url, 'GET', `${u.pathname}${u.search}`);
    expect(page.status, page.text).to.equal(200);
    const course = configOf(page.text).course as { screens: { blocks: Served[] }[] };
    return { blocks: course.screens[0]!.blocks, csp: page.headers.get('content-security-policy') ?? '' };
  };
  const signed = /^http:\/\/127\.0\.0\.1:\d+\/.+X-Amz-Signature=/;

  it('an opened run and the preview get a short-lived signed address for their own image; another workspace’s id, a deleted one and a malformed one are marked unavailable; an https URL is kept', async () => {
    const ws = await makeWorkspace(em(), 'build');
    const other = await makeWorkspace(em(), 'build');
    const png = await pngOf(40, 30);
    const mine = await upload(ws.key, png);
    const gone = await upload(ws.key, await pngOf(5, 5));
    const theirs = await upload(other.key, await pngOf(6, 6));
    expectStatus(await api(app.base, ws.key)('DELETE', `/media/${gone.id}`), 204);
    const blocks = [
      { id: 'b1', type: 'image', url: mine.url, alt: 'Mine' },
      { id: 'b2', type: 'image', url: theirs.url, alt: 'Theirs' },
      { id: 'b3', type: 'image', url: gone.url, alt: 'Gone' },
      // What only the server sets is not taken from the stored block.
      {
        id: 'b4',
        type: 'image',
        url: 'https://example.com/a.png',
        alt: 'External',
        srcset: 'https://evil.example/x.png 9000w',
        unavailable: true,
      },
      { id: 'b5', type: 'image', url: 'media://not an id', alt: 'Malformed' },
      { id: 'b6', type: 'video', url: gone.url, poster: gone.url },
    ];
    const screens = [{ id: 's1', title: 'S', blocks }];
    const courseId = await publishedCourse(app.base, ws.key, { screens });
    for (const [where, served] of [
      ['player', await openRun(courseId, 7)],
      ['preview', (await previewBlocks(ws.key, courseId)).blocks],
    ] as const) {
      expect(served[0]!.url, where).to.match(signed);
      const got = await fetch(served[0]!.url as string);
      expect(got.status, where).to.equal(200);
      expect(got.headers.get('content-type')).to.equal('image/png');
      expect(Buffer.from(await got.arrayBuffer()).equals(png)).to.equal(true);
      for (const i of [1, 2, 4]) {
        expect(served[i], `${where} ${i}`).to.include({ url: null, unavailable: true });
      }
      expect(served[3], where).to.deep.equal({
        id: 'b4',
        type: 'image',
        url: 'https://example.com/a.png',
        alt: 'External',
      });
      // A video that resolves nowhere is unavailable; its poster is left out.
      expect(served[5], where).to.deep.equal({ id: 'b6', type: 'video', url: null, unavailable: true });
      // A tampered signature gets nothing.
      const tampered = (served[0]!.url as string).replace(
        /(X-Amz-Signature=)([0-9a-f])/,
        (_m, p: string, c: string) => p + (c === 'a' ? 'b' : 'a'),
      );
      expect((await fetch(tampered)).status, where).to.equal(403);
    }
    // The preview page lets the browser load from the store (a loopback store is plain http).
    const { csp } = await previewBlocks(ws.key, courseId);
    expect(csp).to.match(/img-src [^;]*http:\/\/127\.0\.0\.1:\d+/);
  });

  it('a processed image is served with a srcset of signed WebP variants, its size and its placeholder, in image, hotspot, slideshow and video poster alike', async () => {
    const ws = await makeWorkspace(em(), 'build');
    const big = await upload(ws.key, await pngOf(2000, 1000));
    const m = await processedMedia(app.base, ws.key, big.id);
    expect(m.status, m.error ?? '').to.equal('ready');
    const blocks = [
      { id: 'b1', type: 'image', url: big.url, alt: 'Wide' },
      {
        id: 'b2',
        type: 'hotspot',
        image: big.url,
        alt: 'Map',
        question: 'Where?',
        spots: [{ x: 0.1, y: 0.1, correct: true, label: 'Here' }],
      },
      { id: 'b3', type: 'slideshow', slides: [{ image: big.url, alt: 'One' }] },
      { id: 'b4', type: 'video', url: 'https://example.com/v.mp4', poster: big.url },
    ];
    const courseId = await publishedCourse(app.base, ws.key, { screens: [{ id: 's1', title: 'S', blocks }] });
    for (const [where, served] of [
      ['player', await openRun(courseId, 8)],
      ['preview', (await previewBlocks(ws.key, courseId)).blocks],
    ] as const) {
      const holders = [served[0]!, served[1]!, (served[2]!.slides as Served[])[0]!, served[3]!];
      for (const h of holders) {
        expect(h, where).to.include({ width: 2000, height: 1000 });
        expect(h.placeholder, where).to.match(/^data:image\//);
        const candidates = (h.srcset as string).split(', ').map((c) => c.split(' '));
        expect(
          candidates.map((c) => c[1]),
          where,
        ).to.deep.equal(['480w', '960w', '1920w', '2000w']);
        for (const [u] of candidates) expect(u, where).to.match(signed);
      }
      const [first] = (served[0]!.srcset as string).split(' ');
      const variant = await fetch(first!);
      expect(variant.status, where).to.equal(200);
      expect(variant.headers.get('content-type'), where).to.equal('image/webp');
      // The playable field of the video keeps its address and no image fields of its own.
      expect(served[3]!.url).to.equal('https://example.com/v.mp4');
    }
  });

  it('a processed video with no poster of its own is served with its poster frame, signed, and its frame size; an author’s poster wins; a deleted video has none', async () => {
    const ws = await makeWorkspace(em(), 'build');
    const uploadVideo = async () => {
      const res = await uploadForm(app.base, ws.key, {
        file: { bytes: await avSample('mp4') },
        kind: 'video',
      });
      expectStatus(res, 201);
      const m = await processedMedia(app.base, ws.key, res.body.data.id);
      expect(m.status, m.error ?? '').to.equal('ready');
      return m;
    };
    const video = await uploadVideo();
    const gone = await uploadVideo();
    expectStatus(await api(app.base, ws.key)('DELETE', `/media/${gone.id}`), 204);
    const still = await upload(ws.key, await pngOf(64, 48));
    // Processed, so its own size is settled before the course is served.
    expect((await processedMedia(app.base, ws.key, still.id)).status).to.equal('ready');
    const blocks = [
      { id: 'v1', type: 'video', url: video.url, caption: 'Framed' },
      { id: 'v2', type: 'video', url: video.url, poster: 'https://example.com/p.png' },
      { id: 'v3', type: 'video', url: video.url, poster: still.url },
      { id: 'v4', type: 'video', url: gone.url },
    ];
    const courseId = await publishedCourse(app.base, ws.key, { screens: [{ id: 's1', title: 'S', blocks }] });
    // The frames come from the rows the signer reads anyway: one media query for the course's four references.
    const knex = app.rt.orm.em.getConnection().getKnex();
    const mediaQueries: string[] = [];
    const onQuery = (q: { sql: string }) => {
      if (/\bfrom media\b/.test(q.sql)) mediaQueries.push(q.sql);
    };
    knex.on('query', onQuery);
    const opened = await openRun(courseId, 10).finally(() => knex.off('query', onQuery));
    expect(mediaQueries).to.have.length(1);
    for (const [where, served] of [
      ['player', opened],
      ['preview', (await previewBlocks(ws.key, courseId)).blocks],
    ] as const) {
      const [framed, external, own, deleted] = served;
      expect(framed!.url, where).to.match(signed);
      expect(framed!.poster, where).to.match(signed);
      expect(framed, where).to.include({ width: 320, height: 240 });
      const frame = await fetch(framed!.poster as string);
      expect(frame.status, where).to.equal(200);
      expect(frame.headers.get('content-type'), where).to.equal('image/webp');
      const bytes = Buffer.from(await frame.arrayBuffer());
      expect(bytes.subarray(8, 12).toString('ascii'), where).to.equal('WEBP');
      const video = await fetch(framed!.url as string);
      expect(video.headers.get('content-type'), where).to.equal('video/mp4');
      await video.body?.cancel();
      // The author's poster wins, external or uploaded; the frame's size comes with the frame only.
      expect(external, where).to.deep.equal({
        id: 'v2',
        type: 'video',
        url: framed!.url,
        poster: 'https://example.com/p.png',
      });
      expect(own!.poster, where).to.match(signed);
      expect(own!.poster, where).not.to.equal(framed!.poster);
      expect(own, where).to.include({ width: 64, height: 48 });
      expect((await fetch(own!.poster as string)).headers.get('content-type'), where).to.equal('image/png');
      // A deleted video is unavailable, with no poster.
      expect(deleted, where).to.deep.equal({ id: 'v4', type: 'video', url: null, unavailable: true });
    }
  });

  it('a signed address past its lifetime gets nothing, and neither does the object path without a signature or the media:// reference itself', async () => {
    const ws = await makeWorkspace(em(), 'build');
    const mine = await upload(ws.key, await pngOf(8, 8));
    const courseId = await publishedCourse(app.base, ws.key, {
      screens: [{ id: 's1', title: 'S', blocks: [{ id: 'b1', type: 'image', url: mine.url, alt: 'A' }] }],
    });
    const url = (await openRun(courseId, 9))[0]!.url as string;
    expect((await fetch(url)).status).to.equal(200);
    const raw = new URL(url);
    raw.search = '';
    expect((await fetch(raw)).status).to.equal(403);
    let refused = false;
    await fetch(mine.url).catch(() => (refused = true));
    expect(refused, 'media:// is no address').to.equal(true);
    // MEDIA_URL_TTL_SECONDS is 5 in this app: wait until the signature is surely past it.
    const signedAt = Date.parse(
      new URL(url).searchParams
        .get('X-Amz-Date')!
        .replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'),
    );
    await new Promise((r) => setTimeout(r, Math.max(0, signedAt + 7_000 - Date.now())));
    expect((await fetch(url)).status).to.equal(403);
  });
});
