import { expect } from 'chai';
import { makeWorkspace, startTestApp, type TestApp } from '../support/context.js';
import {
  api,
  expectIssue,
  expectNotFound,
  expectPlanRequired,
  expectStatus,
  type CourseDto,
} from '../support/authoring.js';
import type { TranslatableDto, TranslationDto } from '@lectern/contracts';
import type { PlanName } from '@lectern/db';
import { boundQuery } from '@lectern/db';

function sourceScreens() {
  return [
    {
      id: 'intro',
      title: 'Welcome',
      blocks: [
        { id: 'h1', type: 'heading', text: 'Fire safety' },
        { id: 'p1', type: 'text', text: 'Fire needs heat, fuel and oxygen.' },
      ],
    },
    {
      id: 'quiz',
      title: 'Check',
      blocks: [
        {
          id: 'q1',
          type: 'quiz_single_choice',
          question: 'Which gas feeds a fire?',
          options: [
            { id: 'a', text: 'Oxygen', correct: true },
            { id: 'b', text: 'Helium', correct: false },
          ],
        },
        {
          id: 'f1',
          type: 'fill_in_blank',
          text: 'Fire needs {{b1}}.',
          blanks: [{ id: 'b1', answers: ['heat'] }],
        },
      ],
    },
  ];
}

describe('authoring: translations (SPEC "Translation", "Translations")', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());
  const em = () => app.rt.orm.em.fork();
  const workspace = async (plan: PlanName = 'scale', name = 'Translations') => {
    const ws = await makeWorkspace(em(), plan, name);
    const req = api(app.base, ws.key);
    const course = async (body: Record<string, unknown> = {}) => {
      const res = await req<CourseDto>('POST', '/courses', {
        title: 'Fire safety basics',
        screens: sourceScreens(),
        ...body,
      });
      expectStatus(res, 201);
      return res.body.data;
    };
    const translation = async (courseId: string, locale: string) => {
      const res = await req<TranslationDto>('POST', `/courses/${courseId}/translations`, { locale });
      expectStatus(res, 201);
      return res.body.data;
    };
    return { ws, req, course, translation };
  };

  it('Build: every translation route → 403 plan_required naming Scale, before the body is validated', async () => {
    // The Build workspace's own course (courses are on every plan).
    const { req } = await workspace('build', 'Build');
    const own = await req<CourseDto>('POST', '/courses', { title: 'Mine' });
    const id = own.body.data.id;
    for (const [m, p, body] of [
      ['GET', `/courses/${id}/translatable`, undefined],
      ['GET', `/courses/${id}/translations`, undefined],
      ['POST', `/courses/${id}/translations`, { locale: 'fr' }],
      ['POST', `/courses/${id}/translations`, { locale: 'not a locale!' }],
      ['GET', `/courses/${id}/translations/trn_x`, undefined],
      ['PATCH', `/courses/${id}/translations/trn_x`, { content: { nope: 5 } }],
      ['DELETE', `/courses/${id}/translations/trn_x`, undefined],
    ] as const) {
      const res = await req(m, p, body);
      expectPlanRequired(res, 'Scale');
      expect(res.body.requiredPlan, `${m} ${p}`).to.equal('scale');
    }
  });

  it('GET /courses/:id/translatable: sourceLocale is the course language; fields with path, group, labelKey, sourceText', async () => {
    const { req, course } = await workspace();
    const c = await course({ locale: 'fr' });
    const res = await req<TranslatableDto>('GET', `/courses/${c.id}/translatable`);
    expectStatus(res, 200);
    expect(res.body.data.sourceLocale).to.equal('fr');
    const fields = res.body.data.fields;
    expect(fields[0]).to.deep.equal({
      path: 'title',
      group: 'course',
      labelKey: 'course.title',
      sourceText: 'Fire safety basics',
    });
    expect(fields).to.deep.include({
      path: 's:intro.title',
      group: 's:intro',
      labelKey: 'screen.title',
      sourceText: 'Welcome',
    });
    expect(fields).to.deep.include({
      path: 's:intro.b:h1.text',
      group: 's:intro',
      labelKey: 'block.heading.text',
      sourceText: 'Fire safety',
    });
    expect(fields).to.deep.include({
      path: 's:quiz.b:q1.options.a.text',
      group: 's:quiz',
      labelKey: 'block.quiz_single_choice.options.text',
      sourceText: 'Oxygen',
    });
    expect(fields.map((f) => f.path)).to.deep.equal([
      'title',
      's:intro.title',
      's:intro.b:h1.text',
      's:intro.b:p1.text',
      's:quiz.title',
      's:quiz.b:q1.question',
      's:quiz.b:q1.options.a.text',
      's:quiz.b:q1.options.b.text',
      's:quiz.b:f1.text',
      's:quiz.b:f1.blanks.b1.answers.0',
    ]);
  });

  it('create a locale: 201, initially empty, canonical tag, sourceHash = the course content hash', async () => {
    const { req, course } = await workspace();
    const c = await course();
    const res = await req<TranslationDto>('POST', `/courses/${c.id}/translations`, { locale: 'pt-br' });
    expectStatus(res, 201);
    const t = res.body.data;
    expect(t.id).to.match(/^trn_/);
    expect(t).to.deep.include({
      courseId: c.id,
      locale: 'pt-BR',
      content: {},
      sourceHash: c.contentHash,
      currentSourceHash: c.contentHash,
      stalePaths: [],
    });
    expect(t.createdAt).to.match(/Z$/);
    expect(
      (await req<TranslationDto>('GET', `/courses/${c.id}/translations/${t.id}`)).body.data,
    ).to.deep.equal(t);
  });

  it('locale rules: BCP-47 checked (400), the source language (400), an existing locale (409 conflict)', async () => {
    const { req, course, translation } = await workspace();
    const c = await course();
    for (const bad of ['en_US', 'not a locale', '', 'x'.repeat(40), 42]) {
      expectIssue(await req('POST', `/courses/${c.id}/translations`, { locale: bad }), ['locale']);
    }
    expectIssue(await req('POST', `/courses/${c.id}/translations`, {}), ['locale']);
    expectIssue(
      await req('POST', `/courses/${c.id}/translations`, { locale: 'en' }),
      ['locale'],
      'source_locale',
    );
    expectIssue(
      await req('POST', `/courses/${c.id}/translations`, { locale: 'EN' }),
      ['locale'],
      'source_locale',
    );
    await translation(c.id, 'de');
    for (const again of ['de', 'DE']) {
      const res = await req('POST', `/courses/${c.id}/translations`, { locale: again });
      expect(res.status, res.text).to.equal(409);
      expect(res.body.error).to.equal('conflict');
      expect(res.body.message).to.include('de');
    }
    // The same locale on another course is fine.
    const other = await course({ title: 'Other' });
    await translation(other.id, 'de');
  });

  it('concurrent creates of one locale: exactly one 201, the rest 409', async () => {
    const { req, course } = await workspace();
    const c = await course();
    const results = await Promise.all(
      Array.from({ length: 6 }, () => req('POST', `/courses/${c.id}/translations`, { locale: 'it' })),
    );
    expect(results.filter((r) => r.status === 201)).to.have.length(1);
    expect(results.filter((r) => r.status === 409)).to.have.length(5);
  });

  it('PATCH merges content; an empty string clears a path back to the source text', async () => {
    const { req, course, translation } = await workspace();
    const c = await course();
    const t = await translation(c.id, 'fr');
    const url = `/courses/${c.id}/translations/${t.id}`;
    let res = await req<TranslationDto>('PATCH', url, {
      content: { title: 'Les bases', 's:intro.title': 'Bienvenue' },
    });
    expectStatus(res, 200);
    expect(res.body.data.content).to.deep.equal({ title: 'Les bases', 's:intro.title': 'Bienvenue' });
    res = await req<TranslationDto>('PATCH', url, { content: { 's:quiz.b:q1.options.a.text': 'Oxygène' } });
    expect(res.body.data.content).to.deep.equal({
      title: 'Les bases',
      's:intro.title': 'Bienvenue',
      's:quiz.b:q1.options.a.text': 'Oxygène',
    });
    res = await req<TranslationDto>('PATCH', url, { content: { title: '', 's:intro.title': 'Accueil' } });
    expect(res.body.data.content).to.deep.equal({
      's:intro.title': 'Accueil',
      's:quiz.b:q1.options.a.text': 'Oxygène',
    });
    // Clearing a path that holds nothing is fine too.
    res = await req<TranslationDto>('PATCH', url, { content: { 's:intro.b:h1.text': '' } });
    expectStatus(res, 200);
    expect((await req<TranslationDto>('GET', url)).body.data.content).to.deep.equal({
      's:intro.title': 'Accueil',
      's:quiz.b:q1.options.a.text': 'Oxygène',
    });
    expect(res.body.data.stalePaths).to.deep.equal([]);
  });

  it('PATCH refuses unknown paths, non-strings and broken blank markers with the path ["content", <path>]; nothing is stored', async () => {
    const { req, course, translation } = await workspace();
    const c = await course();
    const t = await translation(c.id, 'fr');
    const url = `/courses/${c.id}/translations/${t.id}`;
    expectIssue(
      await req('PATCH', url, { content: { title: 'ok', 's:nope.title': 'x' } }),
      ['content', 's:nope.title'],
      'unknown_path',
    );
    expectIssue(
      await req('PATCH', url, { content: { 's:quiz.b:q1.correct': 'x' } }),
      ['content', 's:quiz.b:q1.correct'],
      'unknown_path',
    );
    expectIssue(await req('PATCH', url, { content: { title: 5 } }), ['content', 'title']);
    expectIssue(
      await req('PATCH', url, { content: { 's:quiz.b:f1.text': 'Le feu a besoin de chaleur.' } }),
      ['content', 's:quiz.b:f1.text'],
      'blank_marker',
    );
    expectIssue(await req('PATCH', url, {}), ['content']);
    expectIssue(await req('PATCH', url, { content: ['title'] }), ['content']);
    expect((await req<TranslationDto>('GET', url)).body.data.content).to.deep.equal({});
    const ok = await req<TranslationDto>('PATCH', url, {
      content: { 's:quiz.b:f1.text': 'Le feu a besoin de {{b1}}.' },
    });
    expectStatus(ok, 200);
  });

  it('list (by locale), get, delete', async () => {
    const { req, course, translation } = await workspace();
    const c = await course();
    const es = await translation(c.id, 'es');
    const de = await translation(c.id, 'de');
    const list = await req<TranslationDto[]>('GET', `/courses/${c.id}/translations`);
    expectStatus(list, 200);
    expect(list.body.data.map((t) => t.locale)).to.deep.equal(['de', 'es']);
    expect(list.body.data[0]).to.deep.equal(de);
    const del = await req('DELETE', `/courses/${c.id}/translations/${es.id}`);
    expect(del.status).to.equal(204);
    expectNotFound(await req('GET', `/courses/${c.id}/translations/${es.id}`));
    expectNotFound(await req('PATCH', `/courses/${c.id}/translations/${es.id}`, { content: {} }));
    expectNotFound(await req('DELETE', `/courses/${c.id}/translations/${es.id}`));
    expect(
      (await req<TranslationDto[]>('GET', `/courses/${c.id}/translations`)).body.data.map((t) => t.locale),
    ).to.deep.equal(['de']);
    // A deleted locale can be created again.
    await translation(c.id, 'es');
  });

  it('stale paths: after a course edit the translation names exactly the paths whose source changed or vanished', async () => {
    const { req, course, translation } = await workspace();
    const c = await course();
    const t = await translation(c.id, 'fr');
    const url = `/courses/${c.id}/translations/${t.id}`;
    const written = await req<TranslationDto>('PATCH', url, {
      content: {
        title: 'Les bases',
        's:intro.title': 'Bienvenue',
        's:intro.b:p1.text': 'Le feu a besoin de chaleur, de combustible et d’oxygène.',
        's:quiz.b:q1.question': 'Quel gaz nourrit un feu ?',
      },
    });
    expect(written.body.data.stalePaths).to.deep.equal([]);
    expect(written.body.data.sourceHash).to.equal(c.contentHash);

    // Edit one translated text and one untranslated text; drop nothing yet.
    const edited = sourceScreens();
    edited[0].blocks[1].text = 'Fire needs heat, fuel and an oxidiser.';
    (edited[1].blocks[0] as { options: { text: string }[] }).options[1].text = 'Neon';
    const patched = await req<CourseDto>('PATCH', `/courses/${c.id}`, { screens: edited });
    expectStatus(patched, 200);
    let got = await req<TranslationDto>('GET', url);
    expect(got.body.data.stalePaths).to.deep.equal(['s:intro.b:p1.text']);
    expect(got.body.data.sourceHash).to.equal(c.contentHash);
    expect(got.body.data.currentSourceHash).to.equal(patched.body.data.contentHash);
    expect(got.body.data.currentSourceHash).to.not.equal(got.body.data.sourceHash);
    expect(got.body.data.content['s:intro.b:p1.text']).to.include('chaleur');

    // A renamed course title is stale too; the list shows the same view.
    await req('PATCH', `/courses/${c.id}`, { title: 'Fire safety, revised' });
    const listed = (await req<TranslationDto[]>('GET', `/courses/${c.id}/translations`)).body.data[0];
    expect(listed.stalePaths).to.have.members(['title', 's:intro.b:p1.text']);

    // Re-sending a translation marks it current again, and the sourceHash moves to now.
    const redone = await req<TranslationDto>('PATCH', url, {
      content: { 's:intro.b:p1.text': 'Le feu a besoin de chaleur, de combustible et d’un comburant.' },
    });
    expect(redone.body.data.stalePaths).to.deep.equal(['title']);
    expect(redone.body.data.sourceHash).to.equal(redone.body.data.currentSourceHash);

    // Removing the quiz screen orphans its translated path: stale, clearable with '', not writable.
    await req('PATCH', `/courses/${c.id}`, { screens: [edited[0]] });
    got = await req<TranslationDto>('GET', url);
    expect(got.body.data.stalePaths).to.have.members(['title', 's:quiz.b:q1.question']);
    expectIssue(
      await req('PATCH', url, { content: { 's:quiz.b:q1.question': 'Encore ?' } }),
      ['content', 's:quiz.b:q1.question'],
      'unknown_path',
    );
    const cleaned = await req<TranslationDto>('PATCH', url, {
      content: { 's:quiz.b:q1.question': '', title: 'Les bases, révisées' },
    });
    expectStatus(cleaned, 200);
    expect(cleaned.body.data.stalePaths).to.deep.equal([]);
    expect(cleaned.body.data.content).to.not.have.property('s:quiz.b:q1.question');
  });

  it("a course's own language cannot become one of its translated locales", async () => {
    const { req, course, translation } = await workspace();
    const c = await course();
    await translation(c.id, 'fr');
    expectIssue(await req('PATCH', `/courses/${c.id}`, { locale: 'fr' }), ['locale'], 'translation_exists');
    expectStatus(await req('PATCH', `/courses/${c.id}`, { locale: 'en-GB' }), 200);
  });

  it('deleting the course deletes its translations', async () => {
    const { req, course, translation } = await workspace();
    const c = await course();
    const t = await translation(c.id, 'fr');
    expectStatus(await req('DELETE', `/courses/${c.id}`), 204);
    expectNotFound(await req('GET', `/courses/${c.id}/translations`));
    const rows = await boundQuery(em(), 'select id from course_translations where id = ?', [t.id]);
    expect(rows).to.have.length(0);
  });

  it("another workspace's course or translation is a 404 on every route; a translation is reached only through its own course", async () => {
    const a = await workspace('scale', 'A');
    const b = await workspace('scale', 'B');
    const c = await a.course();
    const t = await a.translation(c.id, 'fr');
    const other = await a.course({ title: 'Sibling' });
    for (const [m, p, body] of [
      ['GET', `/courses/${c.id}/translatable`, undefined],
      ['GET', `/courses/${c.id}/translations`, undefined],
      ['POST', `/courses/${c.id}/translations`, { locale: 'de' }],
      ['GET', `/courses/${c.id}/translations/${t.id}`, undefined],
      ['PATCH', `/courses/${c.id}/translations/${t.id}`, { content: { title: 'Volé' } }],
      ['DELETE', `/courses/${c.id}/translations/${t.id}`, undefined],
    ] as const) {
      expectNotFound(await b.req(m, p, body));
    }
    expectNotFound(await a.req('GET', `/courses/${other.id}/translations/${t.id}`));
    expectNotFound(
      await a.req('PATCH', `/courses/${other.id}/translations/${t.id}`, { content: { title: 'x' } }),
    );
    expectNotFound(await a.req('DELETE', `/courses/${other.id}/translations/${t.id}`));
    expectNotFound(await a.req('GET', '/courses/crs_nope/translatable'));
    const still = await a.req<TranslationDto>('GET', `/courses/${c.id}/translations/${t.id}`);
    expect(still.body.data.content).to.deep.equal({});
    expect(
      (await a.req<TranslationDto[]>('GET', `/courses/${c.id}/translations`)).body.data.map((x) => x.locale),
    ).to.deep.equal(['fr']);
  });
});
