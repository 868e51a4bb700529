import { expect } from 'chai';
import {
  makeWorkspace,
  startTestApp,
  testConfig,
  type TestApp,
  type TestWorkspace,
} from '../support/context.js';
import { call, waitFor } from '../support/http.js';

interface OpenApiBody {
  content: Record<string, { schema: { $ref?: string } }>;
}
interface OpenApiOp {
  requestBody?: unknown;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
import { outboxOf, readStream } from '../support/spine.js';
import {
  api,
  expectIssue,
  expectNotFound,
  expectPlanRequired,
  expectStatus,
  screensOf,
  type CourseDto,
} from '../support/authoring.js';
import { setPlan } from '@lectern/admin';
import { contentHash } from '@lectern/courses';
import { eventSubject } from '@lectern/events';
import { createCourse } from '@lectern/authoring';
import { AppError } from '@lectern/errors';
import type { PlanName } from '@lectern/db';

describe('authoring: courses (SPEC "Courses", "Course status", "Limits")', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());
  const em = () => app.rt.orm.em.fork();
  const workspace = async (plan: PlanName = 'scale', name = 'Authoring') => {
    const ws = await makeWorkspace(em(), plan, name);
    return { ws, req: api(app.base, ws.key) };
  };

  describe('create, read, list', () => {
    let ws: TestWorkspace;
    let req: ReturnType<typeof api>;
    before(async () => {
      ({ ws, req } = await workspace('scale'));
    });

    it('POST with only a title → 201 with every default of SPEC.md and issue 3', async () => {
      const res = await req<CourseDto>('POST', '/courses', { title: 'Fire safety' });
      expectStatus(res, 201);
      const c = res.body.data;
      expect(c.id).to.match(/^crs_/);
      expect(res.headers.get('location')).to.equal(`/api/v1/courses/${c.id}`);
      expect(c).to.deep.include({
        workspaceId: ws.id,
        title: 'Fire safety',
        status: 'draft',
        screens: [],
        sourceKind: 'manual',
        direction: 'ltr',
        locale: 'en',
        customFonts: [],
        themeId: null,
        certificateId: null,
        passingScore: null,
        quizFeedback: 'deferred',
        navigation: 'default',
      });
      expect(c.contentHash).to.equal(
        contentHash({ title: 'Fire safety', screens: [], direction: 'ltr', locale: 'en' }),
      );
      expect(c.createdAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(c.updatedAt).to.equal(c.createdAt);
      const got = await req<CourseDto>('GET', `/courses/${c.id}`);
      expectStatus(got, 200);
      expect(got.body.data).to.deep.equal(c);
    });

    it('rtl with a left-to-right locale: the course is saved and the answer warns (meta.warnings)', async () => {
      type Warned = { body: { meta?: { warnings: { code: string; message: string; path: string[] }[] } } };
      const warningsOf = (res: unknown) => (res as Warned).body.meta?.warnings;
      // Created rtl with no locale: the default en would frame right-to-left content in English.
      const made = await req<CourseDto>('POST', '/courses', { title: 'السلامة', direction: 'rtl' });
      expectStatus(made, 201);
      expect(made.body.data).to.deep.include({ direction: 'rtl', locale: 'en' });
      const [warning, ...more] = warningsOf(made) ?? [];
      expect(more).to.deep.equal([]);
      expect(warning).to.deep.include({ code: 'rtl_without_locale', path: ['locale'] });
      expect(warning.message).to.include('"en"');
      const id = made.body.data.id;
      // Any write repeats it while the course stays so; setting the language clears it.
      const touched = await req<CourseDto>('PATCH', `/courses/${id}`, { title: 'السلامة 2' });
      expectStatus(touched, 200);
      expect(warningsOf(touched)?.map((w) => w.code)).to.deep.equal(['rtl_without_locale']);
      const fixed = await req<CourseDto>('PATCH', `/courses/${id}`, { locale: 'ar' });
      expectStatus(fixed, 200);
      expect(fixed.body).not.to.have.property('meta');
      // An ltr course made rtl by a PATCH is warned about too; rtl with an RTL-script tag is not.
      const ltr = await req<CourseDto>('POST', '/courses', { title: 'Plain' });
      expect(ltr.body).not.to.have.property('meta');
      const flipped = await req<CourseDto>('PATCH', `/courses/${ltr.body.data.id}`, { direction: 'rtl' });
      expect(warningsOf(flipped)?.map((w) => w.code)).to.deep.equal(['rtl_without_locale']);
      for (const locale of ['he', 'fa-IR', 'az-Arab']) {
        const ok = await req<CourseDto>('POST', '/courses', { title: 'x', direction: 'rtl', locale });
        expectStatus(ok, 201);
        expect(ok.body, locale).not.to.have.property('meta');
      }
      // GET is the course alone.
      expect((await req<CourseDto>('GET', `/courses/${ltr.body.data.id}`)).body).not.to.have.property('meta');
    });

    it('POST with every optional field stores and returns them', async () => {
      const body = {
        title: '  Trimmed  ',
        screens: screensOf(2),
        passingScore: 72.5,
        quizFeedback: 'immediate',
        navigation: 'hidden',
        direction: 'rtl',
        locale: 'AR-eg',
        customFonts: [{ family: 'Inter', url: 'https://fonts.example.com/inter.woff2', weight: 700 }],
      };
      const res = await req<CourseDto>('POST', '/courses', body);
      expectStatus(res, 201);
      expect(res.body.data).to.deep.include({
        title: 'Trimmed',
        screens: body.screens,
        passingScore: 72.5,
        quizFeedback: 'immediate',
        navigation: 'hidden',
        direction: 'rtl',
        locale: 'ar-EG',
        customFonts: body.customFonts,
      });
    });

    it('GET /courses lists every course newest first, unpaged', async () => {
      const { req: r } = await workspace('build');
      const ids: string[] = [];
      for (const title of ['one', 'two', 'three', 'four', 'five']) {
        const res = await r<CourseDto>('POST', '/courses', { title });
        expectStatus(res, 201);
        ids.push(res.body.data.id);
      }
      const list = await r<CourseDto[]>('GET', '/courses');
      expectStatus(list, 200);
      expect(list.body.data.map((c) => c.id)).to.deep.equal([...ids].reverse());
      expect(list.body).to.not.have.property('pagination');
    });

    it('unknown fields in blocks, items and screens are kept and returned', async () => {
      const screens = [
        {
          id: 'a',
          title: 'A',
          note: 'screen-level extra',
          blocks: [
            {
              id: 'q',
              type: 'quiz_single_choice',
              question: 'Q?',
              options: [{ id: 'o1', text: 'x', correct: true, hint: 'item extra' }],
              colour: 'red',
            },
            { id: 'h', type: 'heading', txt: 'misspelled field: stored, renders blank' },
          ],
        },
      ];
      const res = await req<CourseDto>('POST', '/courses', { title: 'Extras', screens });
      expectStatus(res, 201);
      expect(res.body.data.screens).to.deep.equal(screens);
      const got = await req<CourseDto>('GET', `/courses/${res.body.data.id}`);
      expect(got.body.data.screens).to.deep.equal(screens);
    });

    it('a block with only id and type (missing fields) is accepted', async () => {
      const screens = [{ id: 'a', title: '', blocks: [{ id: 'b', type: 'match' }] }];
      expectStatus(await req('POST', '/courses', { title: 'Blank block', screens }), 201);
    });

    it('unknown top-level keys are ignored, so a fetched course can be sent back', async () => {
      const created = await req<CourseDto>('POST', '/courses', { title: 'Round trip' });
      const res = await req<CourseDto>('PATCH', `/courses/${created.body.data.id}`, {
        ...created.body.data,
        title: 'Round trip 2',
      });
      expectStatus(res, 200);
      expect(res.body.data.id).to.equal(created.body.data.id);
      expect(res.body.data.title).to.equal('Round trip 2');
      expect(res.body.data.sourceKind).to.equal('manual');
    });
  });

  describe('validation: every 400 names the path', () => {
    let req: ReturnType<typeof api>;
    before(async () => {
      ({ req } = await workspace('scale'));
    });

    it('title missing, empty or not a string', async () => {
      expectIssue(await req('POST', '/courses', {}), ['title']);
      expectIssue(await req('POST', '/courses', { title: '   ' }), ['title']);
      expectIssue(await req('POST', '/courses', { title: 42 }), ['title']);
      expectIssue(await req('POST', '/courses', { title: 'x'.repeat(501) }), ['title']);
    });

    it('a known block field of the wrong type → 400 at ["screens", 2, "blocks", 0, "options"]', async () => {
      const screens = screensOf(3);
      screens[2].blocks = [
        { id: 'q', type: 'quiz_single_choice', question: 'Q?', options: 'a,b,c' } as never,
      ];
      expectIssue(await req('POST', '/courses', { title: 'Bad', screens }), [
        'screens',
        2,
        'blocks',
        0,
        'options',
      ]);
    });

    it('a nested item field of the wrong type → 400 at the item field', async () => {
      const screens = [
        {
          id: 's',
          title: 'S',
          blocks: [
            {
              id: 'q',
              type: 'quiz_single_choice',
              options: [
                { id: 'a', text: 'A', correct: true },
                { id: 'b', text: 'B', correct: 'yes' },
              ],
            },
          ],
        },
      ];
      expectIssue(await req('POST', '/courses', { title: 'Bad', screens }), [
        'screens',
        0,
        'blocks',
        0,
        'options',
        1,
        'correct',
      ]);
    });

    it('a type outside the 39 → unknown_type at the type', async () => {
      const screens = [{ id: 's', title: 'S', blocks: [{ id: 'b', type: 'carousel' }] }];
      expectIssue(
        await req('POST', '/courses', { title: 'Bad', screens }),
        ['screens', 0, 'blocks', 0, 'type'],
        'unknown_type',
      );
    });

    it('repeated screen ids and block ids (across screens) → duplicate_id at the repeat', async () => {
      const screens = [
        { id: 's', title: 'S', blocks: [{ id: 'b', type: 'text' }] },
        { id: 's', title: 'T', blocks: [{ id: 'b', type: 'text' }] },
      ];
      const res = await req('POST', '/courses', { title: 'Dupes', screens });
      expectIssue(res, ['screens', 1, 'id'], 'duplicate_id');
      expectIssue(res, ['screens', 1, 'blocks', 0, 'id'], 'duplicate_id');
    });

    it('a stack of 11 cards → 400 at its cards; 10 cards are fine', async () => {
      const cards = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ id: `c${i}`, title: `Card ${i}`, text: 't' }));
      const screens = (n: number) => [
        { id: 's', title: 'S', blocks: [{ id: 'st', type: 'stack', cards: cards(n) }] },
      ];
      expectIssue(
        await req('POST', '/courses', { title: 'Stack', screens: screens(11) }),
        ['screens', 0, 'blocks', 0, 'cards'],
        'too_big',
      );
      expectStatus(await req('POST', '/courses', { title: 'Stack', screens: screens(10) }), 201);
    });

    it('screens not an array, a screen without blocks, a block without id', async () => {
      expectIssue(await req('POST', '/courses', { title: 'x', screens: {} }), ['screens']);
      expectIssue(await req('POST', '/courses', { title: 'x', screens: [{ id: 's', title: 'S' }] }), [
        'screens',
        0,
        'blocks',
      ]);
      expectIssue(
        await req('POST', '/courses', {
          title: 'x',
          screens: [{ id: 's', title: 'S', blocks: [{ type: 'text' }] }],
        }),
        ['screens', 0, 'blocks', 0, 'id'],
      );
    });

    it('a known field sent as null is treated as absent (SDKs send unset fields as null)', async () => {
      const screens = [{ id: 's', title: 'S', blocks: [{ id: 'h', type: 'heading', text: null }] }];
      const res = await req<CourseDto>('POST', '/courses', { title: 'x', screens });
      expectStatus(res, 201);
      expect(res.body.data.screens[0].blocks[0]).to.deep.equal({ id: 'h', type: 'heading' });
      await req('DELETE', `/courses/${res.body.data.id}`);
    });

    it('course fields: passingScore, quizFeedback, navigation, direction, locale, customFonts, themeId', async () => {
      expectIssue(await req('POST', '/courses', { title: 'x', passingScore: 101 }), ['passingScore']);
      expectIssue(await req('POST', '/courses', { title: 'x', passingScore: -1 }), ['passingScore']);
      expectIssue(await req('POST', '/courses', { title: 'x', passingScore: '50' }), ['passingScore']);
      expectIssue(await req('POST', '/courses', { title: 'x', quizFeedback: 'later' }), ['quizFeedback']);
      expectIssue(await req('POST', '/courses', { title: 'x', navigation: 'none' }), ['navigation']);
      expectIssue(await req('POST', '/courses', { title: 'x', direction: 'ttb' }), ['direction']);
      expectIssue(await req('POST', '/courses', { title: 'x', locale: 'en_US' }), ['locale']);
      expectIssue(await req('POST', '/courses', { title: 'x', customFonts: [{ family: 'X' }] }), [
        'customFonts',
        0,
        'url',
      ]);
      expectIssue(await req('POST', '/courses', { title: 'x', themeId: 5 }), ['themeId']);
      const created = await req<CourseDto>('POST', '/courses', { title: 'Patch target' });
      const id = created.body.data.id;
      expectIssue(await req('PATCH', `/courses/${id}`, { status: 'archived' }), ['status']);
      expectIssue(await req('PATCH', `/courses/${id}`, { title: '' }), ['title']);
      expectIssue(
        await req('PATCH', `/courses/${id}`, {
          screens: [{ id: 's', title: 'S', blocks: [{ id: 'b', type: 'nope' }] }],
        }),
        ['screens', 0, 'blocks', 0, 'type'],
      );
      // Nothing of a refused write is stored.
      expect((await req<CourseDto>('GET', `/courses/${id}`)).body.data.screens).to.deep.equal([]);
    });
  });

  describe('PATCH', () => {
    let req: ReturnType<typeof api>;
    before(async () => {
      ({ req } = await workspace('scale'));
    });

    it('screens replace the whole array (no per-screen merge); other fields stay', async () => {
      const created = await req<CourseDto>('POST', '/courses', {
        title: 'Replace',
        screens: screensOf(3),
        passingScore: 50,
      });
      const id = created.body.data.id;
      const one = [{ id: 'z', title: 'Only', blocks: [] }];
      const res = await req<CourseDto>('PATCH', `/courses/${id}`, { screens: one });
      expectStatus(res, 200);
      expect(res.body.data.screens).to.deep.equal(one);
      expect(res.body.data.passingScore).to.equal(50);
      expect(res.body.data.title).to.equal('Replace');
      const title = await req<CourseDto>('PATCH', `/courses/${id}`, { title: 'Renamed' });
      expect(title.body.data.screens).to.deep.equal(one);
      expect((await req<CourseDto>('GET', `/courses/${id}`)).body.data.title).to.equal('Renamed');
    });

    it('every writable field can be changed, and nullable ones cleared', async () => {
      const created = await req<CourseDto>('POST', '/courses', { title: 'Fields', passingScore: 80 });
      const id = created.body.data.id;
      const res = await req<CourseDto>('PATCH', `/courses/${id}`, {
        direction: 'rtl',
        quizFeedback: 'immediate',
        navigation: 'hidden',
        passingScore: null,
        locale: 'he',
      });
      expectStatus(res, 200);
      expect(res.body.data).to.deep.include({
        direction: 'rtl',
        quizFeedback: 'immediate',
        navigation: 'hidden',
        passingScore: null,
        locale: 'he',
      });
      expect(Date.parse(res.body.data.updatedAt)).to.be.at.least(Date.parse(created.body.data.updatedAt));
    });

    it('contentHash follows the material: changes with screens or title, not with passingScore', async () => {
      const created = await req<CourseDto>('POST', '/courses', { title: 'Hash', screens: screensOf(1) });
      const id = created.body.data.id;
      const h0 = created.body.data.contentHash;
      const h1 = (await req<CourseDto>('PATCH', `/courses/${id}`, { passingScore: 10 })).body.data
        .contentHash;
      expect(h1).to.equal(h0);
      const h2 = (await req<CourseDto>('PATCH', `/courses/${id}`, { screens: screensOf(2) })).body.data
        .contentHash;
      expect(h2).to.not.equal(h0);
      const h3 = (await req<CourseDto>('PATCH', `/courses/${id}`, { title: 'Hash 2' })).body.data.contentHash;
      expect(h3).to.not.equal(h2);
    });
  });

  describe('status transitions and events', () => {
    let ws: TestWorkspace;
    let req: ReturnType<typeof api>;
    before(async () => {
      ({ ws, req } = await workspace('build', 'Events'));
    });

    it('only real transitions write course.published / course.unpublished to the outbox, with embedUrl', async () => {
      const created = await req<CourseDto>('POST', '/courses', { title: 'Launch' });
      const id = created.body.data.id;
      const events = async () =>
        (await outboxOf(em(), ws.id)).filter((e) => (e.data.course as { id: string }).id === id);

      expect(
        (await req<CourseDto>('PATCH', `/courses/${id}`, { status: 'draft' })).body.data.status,
      ).to.equal('draft');
      expect(await events()).to.have.length(0);

      const pub = await req<CourseDto>('PATCH', `/courses/${id}`, {
        status: 'published',
        title: 'Launch day',
      });
      expectStatus(pub, 200);
      expect(pub.body.data.status).to.equal('published');
      let rows = await events();
      expect(rows.map((r) => r.type)).to.deep.equal(['course.published']);
      const embedUrl = `${testConfig().PUBLIC_URL}/embed/${id}`;
      expect(embedUrl).to.equal(`http://lectern.test/embed/${id}`);
      expect(rows[0].data).to.deep.equal({ course: { id, title: 'Launch day' }, embedUrl });

      expectStatus(await req('PATCH', `/courses/${id}`, { status: 'published' }), 200);
      expectStatus(await req('PATCH', `/courses/${id}`, { status: 'published', title: 'Launch day!' }), 200);
      expect(await events()).to.have.length(1);

      const unpub = await req<CourseDto>('PATCH', `/courses/${id}`, { status: 'draft' });
      expect(unpub.body.data.status).to.equal('draft');
      rows = await events();
      expect(rows.map((r) => r.type)).to.deep.equal(['course.published', 'course.unpublished']);
      expect(rows[1].data).to.deep.equal({ course: { id, title: 'Launch day!' }, embedUrl });
      expectStatus(await req('PATCH', `/courses/${id}`, { status: 'draft' }), 200);
      expect(await events()).to.have.length(2);

      // The relay publishes both to the EVENTS stream, keyed by the event id.
      const bus = app.rt.bus;
      const published = await waitFor(
        async () => {
          const msgs = [
            ...(await readStream<{ id: string; type: string; workspaceId: string; data: unknown }>(
              app.rt.cfg.NATS_URL,
              bus.names.stream('EVENTS'),
              eventSubject(bus, 'course.published'),
            )),
            ...(await readStream<{ id: string; type: string; workspaceId: string; data: unknown }>(
              app.rt.cfg.NATS_URL,
              bus.names.stream('EVENTS'),
              eventSubject(bus, 'course.unpublished'),
            )),
          ].filter((m) => rows.some((r) => r.id === m.body.id));
          return msgs.length === 2 ? msgs : null;
        },
        { timeoutMs: 10_000, intervalMs: 200, what: 'status events on the bus' },
      );
      for (const m of published) {
        const row = rows.find((r) => r.id === m.body.id)!;
        expect(m.msgId).to.equal(row.id);
        expect(m.body).to.deep.include({ type: row.type, workspaceId: ws.id, data: row.data });
      }
      await waitFor(async () => (await events()).every((e) => e.published_at !== null), {
        what: 'outbox rows marked sent',
      });
    });

    it('concurrent publishes of one draft write exactly one event', async () => {
      const created = await req<CourseDto>('POST', '/courses', { title: 'Race' });
      const id = created.body.data.id;
      const results = await Promise.all(
        Array.from({ length: 6 }, () => req('PATCH', `/courses/${id}`, { status: 'published' })),
      );
      for (const r of results) expectStatus(r, 200);
      const rows = (await outboxOf(em(), ws.id)).filter((e) => (e.data.course as { id: string }).id === id);
      expect(rows.map((r) => r.type)).to.deep.equal(['course.published']);
    });

    it('a refused PATCH (400) with a status change writes no event', async () => {
      const created = await req<CourseDto>('POST', '/courses', { title: 'Refused' });
      const id = created.body.data.id;
      expectIssue(await req('PATCH', `/courses/${id}`, { status: 'published', screens: 'nope' }), [
        'screens',
      ]);
      const rows = (await outboxOf(em(), ws.id)).filter((e) => (e.data.course as { id: string }).id === id);
      expect(rows).to.have.length(0);
      expect((await req<CourseDto>('GET', `/courses/${id}`)).body.data.status).to.equal('draft');
    });
  });

  describe('OpenAPI', () => {
    it('documents every authoring route with its body and response contracts', async () => {
      const res = await call<{
        paths: Record<string, Record<string, OpenApiOp>>;
        components?: { schemas?: Record<string, unknown> };
      }>(app.url, 'GET', '/api/v1/openapi.json');
      expect(res.status).to.equal(200);
      const ops: [string, string, boolean, number][] = [
        ['get', '/courses', false, 200],
        ['post', '/courses', true, 201],
        ['get', '/courses/{id}', false, 200],
        ['patch', '/courses/{id}', true, 200],
        ['delete', '/courses/{id}', false, 204],
        ['get', '/themes', false, 200],
        ['post', '/themes', true, 201],
        ['get', '/themes/{id}', false, 200],
        ['patch', '/themes/{id}', true, 200],
        ['delete', '/themes/{id}', false, 204],
        ['get', '/certificates', false, 200],
        ['post', '/certificates', true, 201],
        ['get', '/certificates/{id}', false, 200],
        ['patch', '/certificates/{id}', true, 200],
        ['delete', '/certificates/{id}', false, 204],
        ['get', '/collections', false, 200],
        ['post', '/collections', true, 201],
        ['get', '/collections/{id}', false, 200],
        ['patch', '/collections/{id}', true, 200],
        ['delete', '/collections/{id}', false, 204],
        ['post', '/collections/{id}/courses', true, 201],
        ['patch', '/collections/{id}/courses/{courseId}', true, 200],
        ['delete', '/collections/{id}/courses/{courseId}', false, 204],
        ['get', '/courses/{id}/translatable', false, 200],
        ['get', '/courses/{id}/translations', false, 200],
        ['post', '/courses/{id}/translations', true, 201],
        ['get', '/courses/{id}/translations/{translationId}', false, 200],
        ['patch', '/courses/{id}/translations/{translationId}', true, 200],
        ['delete', '/courses/{id}/translations/{translationId}', false, 204],
      ];
      for (const [method, path, hasBody, ok] of ops) {
        const op = res.body.paths[`/api/v1${path}`]?.[method];
        expect(op, `${method} ${path}`).to.not.equal(undefined);
        expect(Boolean(op.requestBody), `${method} ${path} body`).to.equal(hasBody);
        expect(op.responses, `${method} ${path}`).to.have.property(String(ok));
        if (ok !== 204)
          expect(op.responses[ok].content?.['application/json']?.schema, `${method} ${path} ${ok}`).to.be.an(
            'object',
          );
        for (const err of [400, 401, 403, 404])
          expect(op.responses, `${method} ${path}`).to.have.property(String(err));
      }
      // The screens of a course body are documented with the whole block catalogue.
      // (A named schema may sit in components; follow its $ref.)
      const refOrSchema = (res.body.paths['/api/v1/courses'].post.requestBody as OpenApiBody).content[
        'application/json'
      ].schema;
      const name = refOrSchema.$ref?.replace('#/components/schemas/', '');
      const body = JSON.stringify(name ? res.body.components?.schemas?.[name] : refOrSchema);
      for (const type of ['quiz_single_choice', 'stack', 'video_chapters', 'markdown'])
        expect(body).to.include(`"const":"${type}"`);
    });
  });

  describe('DELETE', () => {
    it('204, then the course is gone (GET, PATCH and DELETE answer 404)', async () => {
      const { req } = await workspace('scale');
      const id = (await req<CourseDto>('POST', '/courses', { title: 'Doomed' })).body.data.id;
      const res = await req('DELETE', `/courses/${id}`);
      expect(res.status).to.equal(204);
      expect(res.text).to.equal('');
      expectNotFound(await req('GET', `/courses/${id}`));
      expectNotFound(await req('PATCH', `/courses/${id}`, { title: 'x' }));
      expectNotFound(await req('DELETE', `/courses/${id}`));
    });
  });

  describe('workspaces are isolated', () => {
    it("another workspace's course is a 404 on every :id route, and stays untouched", async () => {
      const a = await workspace('scale', 'A');
      const b = await workspace('scale', 'B');
      const created = await a.req<CourseDto>('POST', '/courses', { title: 'Mine' });
      const id = created.body.data.id;
      expectNotFound(await b.req('GET', `/courses/${id}`));
      expectNotFound(await b.req('PATCH', `/courses/${id}`, { title: 'Stolen', status: 'published' }));
      expectNotFound(await b.req('DELETE', `/courses/${id}`));
      expect((await b.req<CourseDto[]>('GET', '/courses')).body.data.map((c) => c.id)).to.not.include(id);
      const still = await a.req<CourseDto>('GET', `/courses/${id}`);
      expect(still.body.data).to.deep.equal(created.body.data);
    });

    it('themeId / certificateId of another workspace (or none) → 400 invalid_request with the path, on POST and PATCH', async () => {
      const a = await workspace('scale', 'A');
      const b = await workspace('scale', 'B');
      const theme = await b.req<{ id: string }>('POST', '/themes', { name: 'B theme' });
      const cert = await b.req<{ id: string }>('POST', '/certificates', { name: 'B cert' });
      expectStatus(theme, 201);
      expectStatus(cert, 201);
      expectIssue(
        await a.req('POST', '/courses', { title: 'x', themeId: theme.body.data.id }),
        ['themeId'],
        'unknown_reference',
      );
      expectIssue(
        await a.req('POST', '/courses', { title: 'x', certificateId: cert.body.data.id }),
        ['certificateId'],
        'unknown_reference',
      );
      expectIssue(
        await a.req('POST', '/courses', { title: 'x', themeId: 'thm_nope' }),
        ['themeId'],
        'unknown_reference',
      );
      const both = await a.req('POST', '/courses', {
        title: 'x',
        themeId: theme.body.data.id,
        certificateId: cert.body.data.id,
      });
      expectIssue(both, ['themeId']);
      expectIssue(both, ['certificateId']);

      const id = (await a.req<CourseDto>('POST', '/courses', { title: 'Target' })).body.data.id;
      expectIssue(
        await a.req('PATCH', `/courses/${id}`, { themeId: theme.body.data.id }),
        ['themeId'],
        'unknown_reference',
      );
      expectIssue(
        await a.req('PATCH', `/courses/${id}`, { certificateId: cert.body.data.id }),
        ['certificateId'],
        'unknown_reference',
      );
      expect((await a.req<CourseDto>('GET', `/courses/${id}`)).body.data).to.deep.include({
        themeId: null,
        certificateId: null,
      });

      // Own theme and template are accepted, and null clears them.
      const own = await a.req<{ id: string }>('POST', '/themes', { name: 'A theme' });
      const ownCert = await a.req<{ id: string }>('POST', '/certificates', { name: 'A cert' });
      const set = await a.req<CourseDto>('PATCH', `/courses/${id}`, {
        themeId: own.body.data.id,
        certificateId: ownCert.body.data.id,
      });
      expect(set.body.data).to.deep.include({
        themeId: own.body.data.id,
        certificateId: ownCert.body.data.id,
      });
      const cleared = await a.req<CourseDto>('PATCH', `/courses/${id}`, {
        themeId: null,
        certificateId: null,
      });
      expect(cleared.body.data).to.deep.include({ themeId: null, certificateId: null });
      const withRefs = await a.req<CourseDto>('POST', '/courses', {
        title: 'Refs',
        themeId: own.body.data.id,
        certificateId: ownCert.body.data.id,
      });
      expectStatus(withRefs, 201);
      expect(withRefs.body.data).to.deep.include({
        themeId: own.body.data.id,
        certificateId: ownCert.body.data.id,
      });
    });

    it('a read-only key cannot create, edit or delete courses (403 insufficient_scope)', async () => {
      const { ws, req } = await workspace('scale');
      const id = (await req<CourseDto>('POST', '/courses', { title: 'RO' })).body.data.id;
      const ro = api(app.base, ws.readKey);
      for (const [m, p, body] of [
        ['POST', '/courses', { title: 'x' }],
        ['PATCH', `/courses/${id}`, { title: 'x' }],
        ['DELETE', `/courses/${id}`, undefined],
      ] as const) {
        const res = await ro(m, p, body);
        expect(res.status, `${m} ${p}`).to.equal(403);
        expect(res.body.error).to.equal('insufficient_scope');
      }
      expectStatus(await ro('GET', `/courses/${id}`), 200);
    });
  });

  describe('plan ceilings (SPEC "Limits")', () => {
    it('Sandbox: 3 courses; the 4th → 403 plan_required naming Build; deleting one frees a place', async () => {
      const { req } = await workspace('sandbox', 'Sandbox');
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await req<CourseDto>('POST', '/courses', { title: `c${i}` });
        expectStatus(res, 201);
        ids.push(res.body.data.id);
      }
      await req('PATCH', `/courses/${ids[0]}`, { status: 'published' });
      const fourth = await req('POST', '/courses', { title: 'c4' });
      expectPlanRequired(fourth, 'Build');
      expect((await req<CourseDto[]>('GET', '/courses')).body.data).to.have.length(3);
      expectStatus(await req('DELETE', `/courses/${ids[1]}`), 204);
      expectStatus(await req('POST', '/courses', { title: 'c4' }), 201);
      expectPlanRequired(await req('POST', '/courses', { title: 'c5' }), 'Build');
    });

    it('Sandbox: concurrent creates cannot overshoot the ceiling', async () => {
      const { req } = await workspace('sandbox', 'Race');
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => req('POST', '/courses', { title: `r${i}` })),
      );
      expect(results.filter((r) => r.status === 201)).to.have.length(3);
      expect(results.filter((r) => r.status === 403)).to.have.length(5);
      expect((await req<CourseDto[]>('GET', '/courses')).body.data).to.have.length(3);
    });

    it('Sandbox: the ceiling counts courses from every source (createCourse with sourceKind csv)', async () => {
      const { ws, req } = await workspace('sandbox', 'Imports');
      for (let i = 0; i < 3; i++) {
        const c = await createCourse(
          em(),
          { id: ws.id, plan: 'sandbox' },
          { title: `csv ${i}`, screens: screensOf(1) },
          { sourceKind: 'csv' },
        );
        expect(c.sourceKind).to.equal('csv');
        expect(c.status).to.equal('draft');
      }
      expectPlanRequired(await req('POST', '/courses', { title: 'manual' }), 'Build');
      let thrown: unknown;
      try {
        await createCourse(em(), { id: ws.id, plan: 'sandbox' }, { title: 'csv 4' }, { sourceKind: 'csv' });
      } catch (err) {
        thrown = err;
      }
      expect(thrown).to.be.instanceOf(AppError);
      expect((thrown as AppError).code).to.equal('plan_required');
    });

    it("createCourse joins the caller's transaction (a worker writing its job row): a rollback leaves no course", async () => {
      const { ws, req } = await workspace('sandbox', 'Worker');
      let thrown: unknown;
      try {
        await em().transactional(async (tx) => {
          const c = await createCourse(
            tx,
            { id: ws.id, plan: 'sandbox' },
            { title: 'In a job', screens: screensOf(2) },
            { sourceKind: 'csv' },
          );
          expect(c.id).to.match(/^crs_/);
          throw new Error('job failed after the course was written');
        });
      } catch (err) {
        thrown = err;
      }
      expect((thrown as Error).message).to.include('job failed');
      expect((await req<CourseDto[]>('GET', '/courses')).body.data).to.have.length(0);
      const kept = await em().transactional((tx) =>
        createCourse(tx, { id: ws.id, plan: 'sandbox' }, { title: 'Committed' }, { sourceKind: 'csv' }),
      );
      const listed = (await req<CourseDto[]>('GET', '/courses')).body.data;
      expect(listed.map((c) => c.id)).to.deep.equal([kept.id]);
      expect(listed[0].sourceKind).to.equal('csv');
    });

    it('createCourse applies the same screen rules as the API (400 with screens paths)', async () => {
      const { ws } = await workspace('build', 'Worker rules');
      let thrown: unknown;
      try {
        await createCourse(
          em(),
          { id: ws.id, plan: 'build' },
          { title: 'Bad', screens: [{ id: 's', title: 'S', blocks: [{ id: 'b', type: 'nope' }] }] },
        );
      } catch (err) {
        thrown = err;
      }
      expect(thrown).to.be.instanceOf(AppError);
      expect((thrown as AppError).code).to.equal('invalid_request');
      expect((thrown as AppError).issues?.map((i) => i.path)).to.deep.equal([
        ['screens', 0, 'blocks', 0, 'type'],
      ]);
    });

    it('Build and Scale: no course ceiling', async () => {
      const { req } = await workspace('build');
      for (let i = 0; i < 4; i++) expectStatus(await req('POST', '/courses', { title: `b${i}` }), 201);
    });

    it('Sandbox: 30 screens are fine, 31 → 403 on POST and on PATCH', async () => {
      const { req } = await workspace('sandbox');
      expectPlanRequired(await req('POST', '/courses', { title: 'big', screens: screensOf(31) }), 'Build');
      const ok = await req<CourseDto>('POST', '/courses', { title: 'thirty', screens: screensOf(30) });
      expectStatus(ok, 201);
      const id = ok.body.data.id;
      expectPlanRequired(await req('PATCH', `/courses/${id}`, { screens: screensOf(31) }), 'Build');
      expect((await req<CourseDto>('GET', `/courses/${id}`)).body.data.screens).to.have.length(30);
      expectStatus(await req('PATCH', `/courses/${id}`, { screens: screensOf(30, 'x') }), 200);
    });

    it('Build: 31 screens are fine', async () => {
      const { req } = await workspace('build');
      expectStatus(await req('POST', '/courses', { title: 'big', screens: screensOf(31) }), 201);
    });

    it('after a downgrade a course over 30 screens stays editable while a write adds no screens', async () => {
      const { ws, req } = await workspace('build', 'Downgrade');
      const created = await req<CourseDto>('POST', '/courses', { title: 'Long', screens: screensOf(35) });
      expectStatus(created, 201);
      const id = created.body.data.id;
      await setPlan(em(), ws.id, 'sandbox');

      expectStatus(await req('PATCH', `/courses/${id}`, { title: 'Long, renamed' }), 200);
      expectStatus(await req('PATCH', `/courses/${id}`, { status: 'published' }), 200);
      const edited = screensOf(35);
      edited[0].title = 'Edited in place';
      expectStatus(await req('PATCH', `/courses/${id}`, { screens: edited }), 200);
      expectStatus(await req('PATCH', `/courses/${id}`, { screens: screensOf(33) }), 200);
      expectPlanRequired(await req('PATCH', `/courses/${id}`, { screens: screensOf(34) }), 'Build');
      const now = await req<CourseDto>('GET', `/courses/${id}`);
      expect(now.body.data.screens).to.have.length(33);
      expect(now.body.data.title).to.equal('Long, renamed');
    });
  });
});
