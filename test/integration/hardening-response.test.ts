/**
 * Issue 20, points 4 and 5: what the service's pages and answers tell browsers (Content-Security-Policy, framing,
 * MIME sniffing, referrers), the Player API's strict JSON bodies, an oversized answer refused as such, and a huge
 * URL answered 414 before the key check.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { boundQuery } from '@lectern/db';
import type { OpenRunResult } from '@lectern/contracts';
import { makeWorkspace, startTestApp, type TestApp, type TestWorkspace } from '../support/context.js';
import { rawHttp } from '../support/spine.js';
import { call } from '../support/http.js';
import { api } from '../support/authoring.js';
import { anonymousId, playerApi, publishedCourse } from '../support/player.js';

/** The directives of a Content-Security-Policy header, by name. */
function directives(header: string | null): Map<string, string[]> {
  expect(header, 'Content-Security-Policy').to.be.a('string');
  const out = new Map<string, string[]>();
  for (const part of header!.split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) out.set(name, values);
  }
  return out;
}

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const inlineStyles = (html: string) => [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]);

/** What every page's policy must hold, whatever the page: scripts only from the service, nothing inline. */
function expectStrictPolicy(csp: Map<string, string[]>, html: string): void {
  expect(csp.get('default-src')).to.deep.equal(["'none'"]);
  const scripts = csp.get('script-src') ?? [];
  expect(scripts).to.include("'self'");
  for (const v of scripts) expect(v, 'script-src').to.not.match(/unsafe|^\*$|^https?:$|^'sha|^'nonce/);
  const styles = csp.get('style-src') ?? [];
  expect(styles).to.include("'self'");
  expect(styles.join(' ')).to.not.include('unsafe');
  // Each inline style element of the page is allowed by its exact hash, and nothing else inline is.
  for (const text of inlineStyles(html)) expect(styles, 'hash of an inline style').to.include(sha256(text));
  expect(csp.get('object-src')).to.deep.equal(["'none'"]);
  expect(csp.get('base-uri')).to.deep.equal(["'none'"]);
  expect(csp.get('connect-src')).to.include("'self'");
  // Courses show media and widgets hosted elsewhere.
  for (const d of ['img-src', 'media-src', 'frame-src'])
    expect(csp.get(d), d).to.include.members(["'self'", 'https:']);
  // No executable inline script in the page: only JSON data blocks and scripts with a src.
  for (const m of html.matchAll(/<script([^>]*)>/g))
    expect(m[1], 'inline script').to.match(/\bsrc="|type="application\/json"/);
}

describe('hardening: response headers, strict Player API bodies, clear refusals (issue 20, points 4 and 5)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let ws: TestWorkspace;
  let courseId: string;
  const em = () => app.rt.orm.em.fork();

  before(async () => {
    // The server as it runs (startApiServer): Node's parser refusals are answered by its clientError handler.
    // Verify lookups are limited per address, and earlier files of the run spent this address's minute.
    app = await startTestApp({ VERIFY_LOOKUPS_PER_MINUTE: '1000' });
    ws = await makeWorkspace(em(), 'scale');
    courseId = await publishedCourse(app.base, ws.key);
  });
  after(async () => app?.close());

  const views = async (workspaceId: string) => {
    const [row] = await boundQuery<{ n: number }>(
      em(),
      `select coalesce(sum(count), 0)::int as n from usage_counters where workspace_id = ? and metric = 'views'`,
      [workspaceId],
    );
    return row.n;
  };

  describe('4. the embed, preview and verify pages carry a strict Content-Security-Policy', () => {
    it('the embed page: scripts from the service only, its inline style by hash, the theme by nonce, framable', async () => {
      const page = await call(app.url, 'GET', `/embed/${courseId}`);
      expect(page.status).to.equal(200);
      const csp = directives(page.headers.get('content-security-policy'));
      expectStrictPolicy(csp, page.text);
      expect(inlineStyles(page.text)).to.have.length(1);
      // The player adds its theme sheet at run time with the nonce the page hands it on the config element.
      const nonce = /id="lectern-player-config" nonce="([^"]+)"/.exec(page.text)?.[1];
      expect(nonce, page.text).to.be.a('string');
      expect(csp.get('style-src')).to.include(`'nonce-${nonce}'`);
      expect(csp.get('frame-ancestors')).to.deep.equal(['*']);
      expect(page.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(page.headers.get('referrer-policy')).to.equal('no-referrer');
      // A fresh nonce per response.
      const again = await call(app.url, 'GET', `/embed/${courseId}`);
      const nonce2 = /id="lectern-player-config" nonce="([^"]+)"/.exec(again.text)?.[1];
      expect(nonce2).to.be.a('string').and.not.equal(nonce);
    });

    it('the embed error pages (404, 401) carry the same policy, their inline style by hash', async () => {
      for (const path of ['/embed/crs_nope', `/embed/${courseId}?identity=not-a-jwt`]) {
        const page = await call(app.url, 'GET', path);
        expect(page.status, path).to.be.oneOf([401, 404]);
        expect(page.headers.get('content-type')).to.match(/^text\/html/);
        const csp = directives(page.headers.get('content-security-policy'));
        expectStrictPolicy(csp, page.text);
        expect(inlineStyles(page.text), path).to.have.length(1);
        expect(csp.get('frame-ancestors')).to.deep.equal(['*']);
        expect(page.headers.get('x-content-type-options')).to.equal('nosniff');
      }
    });

    it('the preview page (refused link, unbuilt bundle) carries the policy too', async () => {
      const link = await api(app.base, ws.key)<{ url: string }>('POST', `/courses/${courseId}/preview`, {});
      expect(link.status, link.text).to.equal(200);
      const url = new URL(link.body.data.url);
      for (const path of [`${url.pathname}${url.search}`, `${url.pathname}?token=forged`]) {
        const page = await call(app.url, 'GET', path);
        // No bundle in this process: a good link answers 503, a forged one 401; both plain HTML pages.
        expect(page.status, path).to.be.oneOf([401, 503]);
        const csp = directives(page.headers.get('content-security-policy'));
        expectStrictPolicy(csp, page.text);
        expect(csp.get('frame-ancestors')).to.deep.equal(['*']);
        expect(page.headers.get('referrer-policy')).to.equal('no-referrer');
        expect(page.headers.get('x-content-type-options')).to.equal('nosniff');
      }
    });

    it('/verify is never framed and sends no referrer, as a page and as JSON', async () => {
      // The HTML page is read with plain fetch: the OpenAPI document describes the JSON answer.
      const page = await fetch(`${app.url}/verify/LC-AAAA-BBBB-CCCC`, { headers: { accept: 'text/html' } });
      const html = await page.text();
      expect(page.status).to.equal(404);
      expect(page.headers.get('content-type')).to.match(/^text\/html/);
      const csp = directives(page.headers.get('content-security-policy'));
      expectStrictPolicy(csp, html);
      expect(inlineStyles(html)).to.have.length(1);
      expect(csp.get('frame-ancestors')).to.deep.equal(["'none'"]);
      expect(page.headers.get('referrer-policy')).to.equal('no-referrer');
      expect(page.headers.get('x-content-type-options')).to.equal('nosniff');
      const json = await call(app.url, 'GET', '/verify/LC-AAAA-BBBB-CCCC', {
        headers: { accept: 'application/json' },
      });
      expect(json.status).to.equal(404);
      expect(directives(json.headers.get('content-security-policy')).get('frame-ancestors')).to.deep.equal([
        "'none'",
      ]);
      expect(json.headers.get('x-content-type-options')).to.equal('nosniff');
    });

    it('the API and the Player API answer with nosniff and a Referrer-Policy, errors included', async () => {
      const answers = [
        await call(app.base, 'GET', '/me', { key: ws.key }),
        await call(app.base, 'GET', '/me'),
        await call(app.url, 'GET', '/healthz'),
        await playerApi(app.url)('POST', '/runs', {
          body: { courseId: 'crs_nope', anonymousId: anonymousId() },
        }),
      ];
      expect(answers.map((a) => a.status)).to.deep.equal([200, 401, 200, 404]);
      for (const a of answers) {
        expect(a.headers.get('x-content-type-options')).to.equal('nosniff');
        expect(a.headers.get('referrer-policy')).to.equal('strict-origin-when-cross-origin');
      }
    });
  });

  describe('5. small ones', () => {
    it('/player/v1 takes only bodies labelled JSON: text/plain, a form or no type is a 415 that counts nothing', async () => {
      const other = await makeWorkspace(em(), 'scale');
      const otherCourse = await publishedCourse(app.base, other.key);
      const body = JSON.stringify({ courseId: otherCourse, anonymousId: anonymousId() });
      for (const type of [
        'text/plain',
        'text/plain;charset=UTF-8',
        'application/x-www-form-urlencoded',
        null,
      ]) {
        const res = await fetch(`${app.url}/player/v1/runs`, {
          method: 'POST',
          headers: type === null ? {} : { 'content-type': type },
          // A Blob body sends no Content-Type of its own.
          body: type === null ? new Blob([body]) : body,
        });
        const answer = (await res.json()) as { error: string; message: string };
        expect(res.status, String(type)).to.equal(415);
        expect(answer.error).to.equal('unsupported_media_type');
        expect(answer.message).to.include('application/json');
      }
      expect(await views(other.id)).to.equal(0);
      // The same body labelled JSON opens the run and counts its view.
      const ok = await fetch(`${app.url}/player/v1/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(ok.status).to.equal(201);
      const run = ((await ok.json()) as { data: OpenRunResult }).data;
      expect(await views(other.id)).to.equal(1);
      // Event batches too.
      const events = await fetch(`${app.url}/player/v1/runs/${run.completion.id}/events`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', authorization: `Bearer ${run.runToken}` },
        body: JSON.stringify({ batchId: 'b1', events: [{ type: 'screen', screenId: 's1' }] }),
      });
      expect(events.status).to.equal(415);
      // /api/v1 keeps reading text/plain JSON (curl and fetch with a string body).
      const lenient = await call(app.base, 'POST', '/identities', {
        key: ws.key,
        raw: JSON.stringify({ externalId: 'plain-text' }),
        headers: { 'content-type': 'text/plain' },
      });
      expect(lenient.status, lenient.text).to.equal(201);
    });

    it('a 17 KiB answer is refused as too large, naming the limit', async () => {
      const player = playerApi(app.url);
      const opened = await player<OpenRunResult>('POST', '/runs', {
        body: { courseId, anonymousId: anonymousId() },
      });
      expect(opened.status).to.equal(201);
      const { runToken, completion } = opened.body.data;
      const res = await player('POST', `/runs/${completion.id}/events`, {
        token: runToken,
        body: { batchId: 'big', events: [{ type: 'answer', blockId: 'q1', answer: 'x'.repeat(17 * 1024) }] },
      });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.error).to.equal('invalid_request');
      expect(res.body.message)
        .to.match(/too large/)
        .and.include('16 KiB');
      expect(res.body.message).to.not.match(/does not have/);
      expect(res.body.issues).to.deep.equal([
        {
          code: 'too_big',
          path: ['events', 0, 'answer'],
          message: `the answer is ${17 * 1024 + 2} bytes of JSON; an answer may be at most 16 KiB (16384 bytes) of JSON`,
        },
      ]);
    });

    it('a 60,000-character URL on /api/v1 is a 414 uri_too_long, before the key is looked at', async () => {
      const path = `/api/v1/courses?q=${'a'.repeat(60_000)}`;
      for (const auth of ['Authorization: Bearer nope\r\n', `Authorization: Bearer ${ws.key}\r\n`, '']) {
        const r = await rawHttp(
          app.url,
          `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${auth}\r\n`,
        );
        expect(r.status, r.text.slice(0, 200)).to.equal(414);
        expect(r.text).to.include('"error":"uri_too_long"');
      }
      // A URL the HTTP parser still takes but the service does not (over 12 KiB): the same answer, from the app.
      const mid = await call(app.base, 'GET', `/courses?q=${'a'.repeat(13_000)}`, { key: 'nope' });
      expect(mid.status).to.equal(414);
      expect(mid.body).to.deep.include({ error: 'uri_too_long' });
      expect(String((mid.body as { message: string }).message)).to.include('12288');
      // An oversized header that is not the URL is not a 414: a broken Authorization header stays the spec's 401.
      const header = await rawHttp(
        app.url,
        `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${'k'.repeat(40_000)}\r\n\r\n`,
      );
      expect(header.status).to.equal(401);
    });
  });
});
