import { z } from 'zod';
import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import {
  CertificateTemplate,
  CreateCertificateTemplate,
  UpdateCertificateTemplate,
} from '@lectern/contracts';
import {
  createCertificateTemplate,
  deleteCertificateTemplate,
  getCertificateTemplate,
  listCertificateTemplates,
  updateCertificateTemplate,
  certificateTemplateDto,
} from '@lectern/authoring';
import { planGate } from '../http/plan-gate.js';
import { errorResponses } from './shared.js';

export function certificateTemplateRoutes(api: ApiRouter, deps: Pick<RouteDeps, 'orm'>) {
  const tags = ['Certificate templates'] as const;
  const em = () => deps.orm.em.fork();
  const gate = planGate('certificate_templates');
  const one = z.object({ data: CertificateTemplate });
  const scale = 'Scale plan or higher (403 plan_required otherwise, before the body is looked at).';

  api.route(
    {
      method: 'get',
      path: '/certificates',
      operationId: 'listCertificateTemplates',
      summary: 'List certificate templates (newest first)',
      description: scale,
      tags,
      responses: {
        200: {
          description: 'Every template of the workspace',
          schema: z.object({ data: z.array(CertificateTemplate) }),
        },
        ...errorResponses,
      },
    },
    gate,
    async (ctx) => {
      ctx.body = {
        data: (await listCertificateTemplates(em(), ctx.state.auth.workspace.id)).map(certificateTemplateDto),
      };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/certificates',
      operationId: 'createCertificateTemplate',
      summary: 'Create a certificate template',
      description: `${scale} Tokens are validated (docs/design-tokens.md); omitted tokens take the built-in defaults.`,
      tags,
      body: CreateCertificateTemplate,
      responses: { 201: { description: 'The created template', schema: one }, ...errorResponses },
    },
    gate,
    async (ctx) => {
      const template = await createCertificateTemplate(em(), ctx.state.auth.workspace.id, ctx.state.body);
      ctx.status = 201;
      ctx.set('Location', `${api.prefix}/certificates/${encodeURIComponent(template.id)}`);
      ctx.body = { data: certificateTemplateDto(template) };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/certificates/:id',
      operationId: 'getCertificateTemplate',
      summary: 'Get one certificate template',
      description: scale,
      tags,
      responses: { 200: { description: 'The template', schema: one }, ...errorResponses },
    },
    gate,
    async (ctx) => {
      ctx.body = {
        data: certificateTemplateDto(
          await getCertificateTemplate(em(), ctx.state.auth.workspace.id, ctx.params.id),
        ),
      };
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/certificates/:id',
      operationId: 'updateCertificateTemplate',
      summary: 'Update a certificate template (tokens replace the design wholesale: send the full object)',
      description: scale,
      tags,
      body: UpdateCertificateTemplate,
      responses: { 200: { description: 'The updated template', schema: one }, ...errorResponses },
    },
    gate,
    async (ctx) => {
      ctx.body = {
        data: certificateTemplateDto(
          await updateCertificateTemplate(em(), ctx.state.auth.workspace.id, ctx.params.id, ctx.state.body),
        ),
      };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/certificates/:id',
      operationId: 'deleteCertificateTemplate',
      summary: 'Delete a certificate template (courses using it fall back to the built-in design)',
      description: scale,
      tags,
      responses: { 204: { description: 'Deleted', schema: null }, ...errorResponses },
    },
    gate,
    async (ctx) => {
      await deleteCertificateTemplate(em(), ctx.state.auth.workspace.id, ctx.params.id);
      ctx.status = 204;
    },
  );
}
