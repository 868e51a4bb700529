import { CertificateTemplateSchema, newId, type CertificateTemplate, type EntityManager } from '@lectern/db';
import { notFound } from '@lectern/errors';
import type { CertificateTemplateInput, CertificateTemplatePatch } from '@lectern/contracts';

/** Certificate templates (Scale and up; the plan gate sits in front of the routes). Newest first. */
export async function listCertificateTemplates(
  em: EntityManager,
  workspaceId: string,
): Promise<CertificateTemplate[]> {
  return em.find(CertificateTemplateSchema, { workspaceId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
}

export async function getCertificateTemplate(
  em: EntityManager,
  workspaceId: string,
  id: string,
): Promise<CertificateTemplate> {
  const template = await em.findOne(CertificateTemplateSchema, { id, workspaceId });
  if (!template) throw notFound('Certificate template');
  return template;
}

export async function createCertificateTemplate(
  em: EntityManager,
  workspaceId: string,
  input: CertificateTemplateInput,
): Promise<CertificateTemplate> {
  const now = new Date();
  const template = em.create(CertificateTemplateSchema, {
    id: newId('cert'),
    workspaceId,
    name: input.name,
    tokens: input.tokens,
    createdAt: now,
    updatedAt: now,
  });
  await em.flush();
  return template;
}

/** SPEC.md: sending `tokens` replaces the design wholesale (tokens left out fall back to the defaults). */
export async function updateCertificateTemplate(
  em: EntityManager,
  workspaceId: string,
  id: string,
  patch: CertificateTemplatePatch,
): Promise<CertificateTemplate> {
  const template = await getCertificateTemplate(em, workspaceId, id);
  if (patch.name !== undefined) template.name = patch.name;
  if (patch.tokens !== undefined) template.tokens = patch.tokens;
  template.updatedAt = new Date();
  await em.flush();
  return template;
}

/**
 * Courses using the template fall back to the built-in default design and keep
 * issuing (`courses.certificate_id` is ON DELETE SET NULL).
 */
export async function deleteCertificateTemplate(
  em: EntityManager,
  workspaceId: string,
  id: string,
): Promise<void> {
  const n = await em.nativeDelete(CertificateTemplateSchema, { id, workspaceId });
  if (!n) throw notFound('Certificate template');
}
