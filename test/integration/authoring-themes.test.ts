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
import type { CertificateTemplateDto, ThemeDto } from '@lectern/contracts';
import type { PlanName } from '@lectern/db';

describe('authoring: themes and certificate templates (SPEC "Theme", "Certificate template")', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());
  const em = () => app.rt.orm.em.fork();
  const workspace = async (plan: PlanName = 'scale', name = 'Design') => {
    const ws = await makeWorkspace(em(), plan, name);
    return { ws, req: api(app.base, ws.key) };
  };

  describe('plan gate: Scale and up', () => {
    for (const plan of ['sandbox', 'build'] as const) {
      it(`${plan}: every theme and template route → 403 plan_required naming Scale, before the body is validated`, async () => {
        const { req } = await workspace(plan);
        const routes: [string, string, unknown][] = [
          ['GET', '/themes', undefined],
          ['POST', '/themes', { name: 'T' }],
          ['POST', '/themes', { tokens: { concept: 'nope' } }],
          ['POST', '/themes', 'not even an object'],
          ['GET', '/themes/thm_x', undefined],
          ['PATCH', '/themes/thm_x', { name: '' }],
          ['DELETE', '/themes/thm_x', undefined],
          ['GET', '/certificates', undefined],
          ['POST', '/certificates', { name: 'C' }],
          ['POST', '/certificates', { tokens: { orientation: 'sideways' } }],
          ['GET', '/certificates/cert_x', undefined],
          ['PATCH', '/certificates/cert_x', { tokens: 5 }],
          ['DELETE', '/certificates/cert_x', undefined],
        ];
        for (const [m, p, body] of routes) {
          const res = await req(m, p, body);
          expectPlanRequired(res, 'Scale');
          expect(res.body.requiredPlan, `${m} ${p}`).to.equal('scale');
        }
      });
    }

    it('partner is above Scale: allowed', async () => {
      const { req } = await workspace('partner');
      expectStatus(await req('POST', '/themes', { name: 'P' }), 201);
      expectStatus(await req('POST', '/certificates', { name: 'P' }), 201);
    });
  });

  describe('themes', () => {
    it('CRUD: create (defaults), get, list newest first, patch any subset, delete', async () => {
      const { ws, req } = await workspace();
      const bare = await req<ThemeDto>('POST', '/themes', { name: 'Bare' });
      expectStatus(bare, 201);
      expect(bare.body.data).to.deep.include({
        workspaceId: ws.id,
        name: 'Bare',
        tokens: {},
        customFonts: [],
      });
      expect(bare.body.data.id).to.match(/^thm_/);

      const tokens = {
        concept: 'editorial',
        mode: 'auto',
        palette: { primary: '#1f3a5f', ink: '#111' },
        darkPalette: { primary: '#9cc3ff', ink: '#eeeeee' },
        displayFont: 'Fraunces',
        fontFamily: 'Inter',
        readingSize: 18,
        corners: 'round',
        density: 'compact',
        logoUrl: 'https://cdn.example.com/logo.svg',
      };
      const customFonts = [{ family: 'Fraunces', url: 'https://fonts.example.com/fraunces.woff2' }];
      const full = await req<ThemeDto>('POST', '/themes', { name: 'Full', tokens, customFonts });
      expectStatus(full, 201);
      expect(full.body.data.tokens).to.deep.equal(tokens);
      expect(full.body.data.customFonts).to.deep.equal(customFonts);

      const got = await req<ThemeDto>('GET', `/themes/${full.body.data.id}`);
      expect(got.body.data).to.deep.equal(full.body.data);
      const list = await req<ThemeDto[]>('GET', '/themes');
      expect(list.body.data.map((t) => t.id)).to.deep.equal([full.body.data.id, bare.body.data.id]);

      const renamed = await req<ThemeDto>('PATCH', `/themes/${full.body.data.id}`, { name: 'Renamed' });
      expectStatus(renamed, 200);
      expect(renamed.body.data).to.deep.include({ name: 'Renamed', tokens, customFonts });
      const retoken = await req<ThemeDto>('PATCH', `/themes/${full.body.data.id}`, {
        tokens: { concept: 'calm' },
      });
      expect(retoken.body.data).to.deep.include({
        name: 'Renamed',
        tokens: { concept: 'calm' },
        customFonts,
      });
      const fonts = await req<ThemeDto>('PATCH', `/themes/${full.body.data.id}`, { customFonts: [] });
      expect(fonts.body.data).to.deep.include({ tokens: { concept: 'calm' }, customFonts: [] });

      expectStatus(await req('DELETE', `/themes/${full.body.data.id}`), 204);
      expectNotFound(await req('GET', `/themes/${full.body.data.id}`));
      expectNotFound(await req('DELETE', `/themes/${full.body.data.id}`));
    });

    it('tokens are validated: 400 with the path of the bad token', async () => {
      const { req } = await workspace();
      expectIssue(await req('POST', '/themes', {}), ['name']);
      expectIssue(await req('POST', '/themes', { name: 'x', tokens: { concept: 'neon' } }), [
        'tokens',
        'concept',
      ]);
      expectIssue(await req('POST', '/themes', { name: 'x', tokens: { mode: 'dim' } }), ['tokens', 'mode']);
      expectIssue(await req('POST', '/themes', { name: 'x', tokens: { palette: { primary: 'blue' } } }), [
        'tokens',
        'palette',
        'primary',
      ]);
      expectIssue(await req('POST', '/themes', { name: 'x', tokens: { readingSize: 200 } }), [
        'tokens',
        'readingSize',
      ]);
      expectIssue(await req('POST', '/themes', { name: 'x', tokens: { corners: 'wobbly' } }), [
        'tokens',
        'corners',
      ]);
      expectIssue(await req('POST', '/themes', { name: 'x', tokens: { density: 'airy' } }), [
        'tokens',
        'density',
      ]);
      const misspelt = await req('POST', '/themes', { name: 'x', tokens: { pallete: { primary: '#000' } } });
      expect(misspelt.status).to.equal(400);
      expect(misspelt.body.issues?.[0].message).to.include('pallete');
      const id = (await req<ThemeDto>('POST', '/themes', { name: 'ok' })).body.data.id;
      expectIssue(await req('PATCH', `/themes/${id}`, { tokens: { palette: { ink: '#12345' } } }), [
        'tokens',
        'palette',
        'ink',
      ]);
      expectIssue(await req('PATCH', `/themes/${id}`, { name: '' }), ['name']);
    });

    it('deleting a theme sets themeId to null on its courses (and only on them)', async () => {
      const { req } = await workspace();
      const doomed = (await req<ThemeDto>('POST', '/themes', { name: 'Doomed' })).body.data.id;
      const kept = (await req<ThemeDto>('POST', '/themes', { name: 'Kept' })).body.data.id;
      const a = (await req<CourseDto>('POST', '/courses', { title: 'A', themeId: doomed })).body.data.id;
      const b = (await req<CourseDto>('POST', '/courses', { title: 'B', themeId: kept })).body.data.id;
      expectStatus(await req('DELETE', `/themes/${doomed}`), 204);
      expect((await req<CourseDto>('GET', `/courses/${a}`)).body.data.themeId).to.equal(null);
      expect((await req<CourseDto>('GET', `/courses/${b}`)).body.data.themeId).to.equal(kept);
      expectIssue(await req('PATCH', `/courses/${a}`, { themeId: doomed }), ['themeId']);
    });

    it("another workspace's theme is a 404 on every :id route", async () => {
      const a = await workspace('scale', 'A');
      const b = await workspace('scale', 'B');
      const id = (await a.req<ThemeDto>('POST', '/themes', { name: 'Mine' })).body.data.id;
      expectNotFound(await b.req('GET', `/themes/${id}`));
      expectNotFound(await b.req('PATCH', `/themes/${id}`, { name: 'Stolen' }));
      expectNotFound(await b.req('DELETE', `/themes/${id}`));
      expect((await b.req<ThemeDto[]>('GET', '/themes')).body.data).to.deep.equal([]);
      expect((await a.req<ThemeDto>('GET', `/themes/${id}`)).body.data.name).to.equal('Mine');
    });
  });

  describe('certificate templates', () => {
    it('CRUD; PATCH with tokens replaces the design wholesale, PATCH without tokens keeps it', async () => {
      const { ws, req } = await workspace();
      const tokens = {
        issuerName: '',
        eyebrow: 'Certificate of achievement',
        accentColor: '#aa3300',
        borderStyle: 'ornate',
        orientation: 'portrait',
        showScore: true,
        layout: 'sealed',
        logoUrl: 'https://cdn.example.com/logo.png',
        order: ['name', 'course'],
        positions: { name: { x: 0.5, y: 0.3, w: 0.8 } },
        qrCorner: 'topEnd',
        sealCorner: 'bottomStart',
      };
      const created = await req<CertificateTemplateDto>('POST', '/certificates', { name: 'Formal', tokens });
      expectStatus(created, 201);
      expect(created.body.data).to.deep.include({ workspaceId: ws.id, name: 'Formal', tokens });
      const id = created.body.data.id;
      expect(id).to.match(/^cert_/);
      expect((await req<CertificateTemplateDto>('GET', `/certificates/${id}`)).body.data).to.deep.equal(
        created.body.data,
      );

      const renamed = await req<CertificateTemplateDto>('PATCH', `/certificates/${id}`, { name: 'Formal 2' });
      expect(renamed.body.data).to.deep.include({ name: 'Formal 2', tokens });
      const replaced = await req<CertificateTemplateDto>('PATCH', `/certificates/${id}`, {
        tokens: { layout: 'minimal' },
      });
      expectStatus(replaced, 200);
      expect(replaced.body.data.tokens).to.deep.equal({ layout: 'minimal' });
      expect(replaced.body.data.name).to.equal('Formal 2');

      const bare = await req<CertificateTemplateDto>('POST', '/certificates', { name: 'Default' });
      expect(bare.body.data.tokens).to.deep.equal({});
      const list = await req<CertificateTemplateDto[]>('GET', '/certificates');
      expect(list.body.data.map((t) => t.id)).to.deep.equal([bare.body.data.id, id]);

      expectStatus(await req('DELETE', `/certificates/${id}`), 204);
      expectNotFound(await req('GET', `/certificates/${id}`));
      expectNotFound(await req('PATCH', `/certificates/${id}`, { name: 'x' }));
    });

    it('tokens are validated: 400 with the path of the bad token', async () => {
      const { req } = await workspace();
      expectIssue(await req('POST', '/certificates', { tokens: {} }), ['name']);
      expectIssue(await req('POST', '/certificates', { name: 'x', tokens: { orientation: 'sideways' } }), [
        'tokens',
        'orientation',
      ]);
      expectIssue(await req('POST', '/certificates', { name: 'x', tokens: { layout: 'fancy' } }), [
        'tokens',
        'layout',
      ]);
      expectIssue(await req('POST', '/certificates', { name: 'x', tokens: { borderStyle: 'zigzag' } }), [
        'tokens',
        'borderStyle',
      ]);
      expectIssue(await req('POST', '/certificates', { name: 'x', tokens: { qrCorner: 'middle' } }), [
        'tokens',
        'qrCorner',
      ]);
      expectIssue(
        await req('POST', '/certificates', {
          name: 'x',
          tokens: { positions: { qr: { x: 1.5, y: 0, w: 0.1 } } },
        }),
        ['tokens', 'positions', 'qr', 'x'],
      );
      expectIssue(
        await req('POST', '/certificates', {
          name: 'x',
          tokens: { logoUrl: 'cdn.example.com/logo.png' },
        }),
        ['tokens', 'logoUrl'],
      );
      const id = (await req<CertificateTemplateDto>('POST', '/certificates', { name: 'ok' })).body.data.id;
      expectIssue(await req('PATCH', `/certificates/${id}`, { tokens: { accentColor: 'red' } }), [
        'tokens',
        'accentColor',
      ]);
    });

    it('deleting a template sets certificateId to null on its courses (the built-in design applies)', async () => {
      const { req } = await workspace();
      const doomed = (await req<CertificateTemplateDto>('POST', '/certificates', { name: 'Doomed' })).body
        .data.id;
      const kept = (await req<CertificateTemplateDto>('POST', '/certificates', { name: 'Kept' })).body.data
        .id;
      const a = (await req<CourseDto>('POST', '/courses', { title: 'A', certificateId: doomed })).body.data
        .id;
      const b = (await req<CourseDto>('POST', '/courses', { title: 'B', certificateId: kept })).body.data.id;
      expectStatus(await req('DELETE', `/certificates/${doomed}`), 204);
      expect((await req<CourseDto>('GET', `/courses/${a}`)).body.data.certificateId).to.equal(null);
      expect((await req<CourseDto>('GET', `/courses/${b}`)).body.data.certificateId).to.equal(kept);
    });

    it("another workspace's template is a 404 on every :id route", async () => {
      const a = await workspace('scale', 'A');
      const b = await workspace('scale', 'B');
      const id = (await a.req<CertificateTemplateDto>('POST', '/certificates', { name: 'Mine' })).body.data
        .id;
      expectNotFound(await b.req('GET', `/certificates/${id}`));
      expectNotFound(await b.req('PATCH', `/certificates/${id}`, { name: 'Stolen' }));
      expectNotFound(await b.req('DELETE', `/certificates/${id}`));
      expect((await b.req<CertificateTemplateDto[]>('GET', '/certificates')).body.data).to.deep.equal([]);
      expect((await a.req<CertificateTemplateDto>('GET', `/certificates/${id}`)).body.data.name).to.equal(
        'Mine',
      );
    });
  });
});
