import { expect } from 'chai';
import { SignJWT } from 'jose';
import type { OpenRunResult, PlayerConfig } from '@lectern/contracts';
import { derivePlayerKeys } from '@lectern/learner-runs';
import { makeWorkspace } from '../support/context.js';
import { startCustomApp, type CustomApp } from '../support/spine.js';
import { call } from '../support/http.js';
import { anonymousId, createEmbedKey, playerApi, publishedCourse, signIdentity } from '../support/player.js';

interface OpenApiDoc {
  tags?: { name: string }[];
  paths: Record<string, Record<string, { tags: string[]; security: unknown[] }>>;
  components: { securitySchemes: Record<string, unknown> };
}

describe('learner runs: the embed page, CORS, caps and limits of the player surface', () => {
  let app: CustomApp;
  before(async () => {
    app = await startCustomApp();
  });
  after(async () => app?.close());
  const em = () => app.rt.orm.em.fork();

  it('the embed page hands the bundle its config as JSON, escaped, with no-store and no-referrer', async () => {
    const ws = await makeWorkspace(em(), 'scale');
    const courseId = await publishedCourse(app.base, ws.key);
    const ek = await createEmbedKey(app.base, ws.key);
    const token = await signIdentity(ek);
    const lang = '</script><script>alert(1)</script>';
    const page = await call(
      app.url,
      'GET',
      `/embed/${courseId}?identity=${token}&lang=${encodeURIComponent(lang)}`,
    );
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
    expect(page.headers.get('cache-control')).to.equal('no-store');
    expect(page.headers.get('referrer-policy')).to.equal('no-referrer');
    expect(page.text).to.not.include('<script>alert(1)');
    const json = /<script type="application\/json" id="lectern-player-config"[^>]*>(.*?)<\/script>/s.exec(
      page.text,
    )?.[1];
    expect(json, page.text).to.be.a('string');
    const config = JSON.parse(json!) as PlayerConfig;
    expect(config).to.deep.equal({
      apiBase: 'http://lectern.test/player/v1',
      courseId,
      identity: token,
      lang,
      mode: 'run',
    });
    expect(page.text).to.include('id="lectern-player"');
    const anonymous = await call(app.url, 'GET', `/embed/${courseId}`);
    const anonConfig = JSON.parse(
      /id="lectern-player-config"[^>]*>(.*?)<\/script>/s.exec(anonymous.text)![1],
    ) as PlayerConfig;
    expect(anonConfig).to.include({ identity: null, lang: null, mode: 'run' });
    // The page counts no view: the player's open does.
    const views = await app.rt.orm.em
      .fork()
      .getConnection()
      .execute(`select count(*)::int as n from usage_counters where workspace_id = ?`, [ws.id]);
    expect(views[0].n).to.equal(0);
  });

  it('/player/v1 answers CORS for any origin, on preflights, successes and errors', async () => {
    const pre = await fetch(`${app.url}/player/v1/runs`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://lms.example.org',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(pre.status).to.equal(204);
    expect(pre.headers.get('access-control-allow-origin')).to.equal('*');
    expect(pre.headers.get('access-control-allow-methods')).to.include('POST');
    expect(pre.headers.get('access-control-allow-headers')?.toLowerCase()).to.include('authorization');
    const refused = await call(`${app.url}/player/v1`, 'POST', '/runs', {
      body: { courseId: 'crs_nope', anonymousId: anonymousId() },
      headers: { origin: 'https://lms.example.org' },
    });
    expect(refused.status).to.equal(404);
    expect(refused.headers.get('access-control-allow-origin')).to.equal('*');
    const api = await call(app.base, 'GET', '/healthz', { headers: { origin: 'https://x.example' } });
    expect(api.headers.get('access-control-allow-origin')).to.equal(null);
  });

  it('caps bodies (413), refuses other media types (415) and malformed text bodies (400)', async () => {
    const player = playerApi(app.url);
    const big = await player('POST', '/runs', {
      body: { courseId: 'c', anonymousId: anonymousId(), pad: 'x'.repeat(20_000) },
    });
    expect(big.status).to.equal(413);
    expect(big.body.error).to.equal('payload_too_large');
    // The Player API takes only bodies labelled JSON (docs/player-api.md): anything else is a 415, text/plain
    // included (unlike /api/v1); a JSON body that does not parse is a malformed body (400).
    const xml = await call(`${app.url}/player/v1`, 'POST', '/runs', {
      raw: '<run courseId="x"/>',
      headers: { 'content-type': 'application/xml' },
    });
    expect(xml.status).to.equal(415);
    expect(xml.body.error).to.equal('unsupported_media_type');
    const text = await call(`${app.url}/player/v1`, 'POST', '/runs', {
      raw: 'courseId=x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).to.equal(415);
    expect(text.body.error).to.equal('unsupported_media_type');
    const malformed = await call(`${app.url}/player/v1`, 'POST', '/runs', {
      raw: '{"courseId":',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).to.equal(400);
    expect(malformed.body.error).to.equal('invalid_request');
  });

  it('an expired run token is refused with a message saying so', async () => {
    const ws = await makeWorkspace(em(), 'scale');
    const courseId = await publishedCourse(app.base, ws.key);
    const run = (
      await playerApi(app.url)<OpenRunResult>('POST', '/runs', {
        body: { courseId, anonymousId: anonymousId() },
      })
    ).body.data;
    const material = Buffer.from(app.rt.cfg.WEBHOOK_SECRET_KEY!, 'hex');
    const { runTokenKey } = derivePlayerKeys(material, { derived: true });
    const expired = await new SignJWT({ wid: ws.id })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(run.completion.id)
      .setAudience('lectern:run')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(runTokenKey);
    const res = await playerApi(app.url)('POST', `/runs/${run.completion.id}/events`, {
      token: expired,
      body: { batchId: 'b', events: [] },
    });
    expect(res.status).to.equal(401);
    expect(res.body.message).to.match(/expired/);
    // The same claims signed with the right key and a future exp pass: the refusal was the expiry.
    const fresh = await new SignJWT({ wid: ws.id })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(run.completion.id)
      .setAudience('lectern:run')
      .setExpirationTime(Math.floor(Date.now() / 1000) + 60)
      .sign(runTokenKey);
    const ok = await playerApi(app.url)('POST', `/runs/${run.completion.id}/events`, {
      token: fresh,
      body: { batchId: 'b', events: [] },
    });
    expect(ok.status).to.equal(200);
  });

  it('the OpenAPI document lists the player routes under their own tag with run-token security', async () => {
    const doc = (await call<OpenApiDoc>(app.base, 'GET', '/openapi.json')).body;
    expect(doc.tags?.map((t) => t.name)).to.include('Player API');
    expect(doc.paths['/player/v1/runs'].post.tags).to.deep.equal(['Player API']);
    expect(doc.paths['/player/v1/runs'].post.security).to.deep.equal([]);
    expect(doc.paths['/player/v1/runs/{completionId}/events'].post.security).to.deep.equal([
      { runToken: [] },
    ]);
    expect(doc.paths['/player/v1/runs/{completionId}/retake'].post.security).to.deep.equal([
      { runToken: [] },
    ]);
    expect(doc.paths['/embed/{courseId}'].get.tags).to.deep.equal(['Player API']);
    expect(doc.components.securitySchemes).to.have.property('runToken');
    for (const p of [
      '/api/v1/completions',
      '/api/v1/completions/{id}',
      '/api/v1/completions/{id}/attempts',
      '/api/v1/embed-keys',
    ])
      expect(doc.paths, p).to.have.property(p);
  });
});

describe('learner runs: per-address and per-run limits', () => {
  it('the per-address limit answers 429 with Retry-After past its budget (opens and embed pages)', async () => {
    const app = await startCustomApp({ PLAYER_OPENS_PER_MINUTE_PER_ADDRESS: '3' });
    try {
      const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale');
      const courseId = await publishedCourse(app.base, ws.key);
      // Start from an empty window for this address (earlier tests share the database).
      await app.rt.orm.em.fork().getConnection().execute(`delete from player_rate`);
      const player = playerApi(app.url);
      for (let i = 0; i < 3; i++)
        expect(
          (await player('POST', '/runs', { body: { courseId, anonymousId: anonymousId(i) } })).status,
        ).to.be.oneOf([200, 201]);
      const refused = await player('POST', '/runs', { body: { courseId, anonymousId: anonymousId(9) } });
      expect(refused.status).to.equal(429);
      expect(refused.body.error).to.equal('rate_limited');
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
      const page = await call(app.url, 'GET', `/embed/${courseId}`);
      expect(page.status).to.equal(429);
      expect(page.headers.get('content-type')).to.match(/^text\/html/);
    } finally {
      await app.close();
    }
  });

  it('the per-run limit answers 429 past its budget, without touching other runs', async () => {
    const app = await startCustomApp({ PLAYER_REQUESTS_PER_MINUTE_PER_RUN: '2' });
    try {
      const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale');
      const courseId = await publishedCourse(app.base, ws.key);
      const player = playerApi(app.url);
      const a = (
        await player<OpenRunResult>('POST', '/runs', { body: { courseId, anonymousId: anonymousId(1) } })
      ).body.data;
      const b = (
        await player<OpenRunResult>('POST', '/runs', { body: { courseId, anonymousId: anonymousId(2) } })
      ).body.data;
      const send = (r: OpenRunResult, id: string) =>
        player('POST', `/runs/${r.completion.id}/events`, {
          token: r.runToken,
          body: { batchId: id, events: [] },
        });
      expect((await send(a, '1')).status).to.equal(200);
      expect((await send(a, '2')).status).to.equal(200);
      const third = await send(a, '3');
      expect(third.status).to.equal(429);
      expect(Number(third.headers.get('retry-after'))).to.be.within(1, 60);
      expect((await send(b, '1')).status).to.equal(200);
    } finally {
      await app.close();
    }
  });

  it('with the default address limit, 1,000 run opens from one address within a minute all pass', async function () {
    this.timeout(120_000);
    const app = await startCustomApp();
    try {
      const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale');
      const courseId = await publishedCourse(app.base, ws.key);
      await app.rt.orm.em.fork().getConnection().execute(`delete from player_rate`);
      const player = playerApi(app.url);
      const statuses: number[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < 1000) {
            const i = next++;
            statuses.push(
              (await player('POST', '/runs', { body: { courseId, anonymousId: anonymousId(1000 + i) } }))
                .status,
            );
          }
        }),
      );
      expect(statuses).to.have.length(1000);
      expect(statuses.filter((s) => s !== 201)).to.deep.equal([]);
    } finally {
      await app.close();
    }
  });
});
