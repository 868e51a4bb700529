/** Row → response and row → event-payload mappers of identities (the schemas are in libs/contracts). */
import { iso, type IdentityDto } from '@lectern/contracts';
import type { Identity as IdentityRow } from '@lectern/db';

/** `course:<courseId>` scopes hold the learners an LMS asserted through that course's tracking token. */
export const LMS_SCOPE_PREFIX = 'course:';

export function identityDto(row: IdentityRow): IdentityDto {
  return {
    id: row.id,
    externalId: row.externalId,
    name: row.name,
    email: row.email,
    lmsCourseId: row.scope.startsWith(LMS_SCOPE_PREFIX) ? row.scope.slice(LMS_SCOPE_PREFIX.length) : null,
    createdAt: iso(row.createdAt)!,
    updatedAt: iso(row.updatedAt)!,
  };
}

export function eventIdentity(row: Pick<IdentityRow, 'id' | 'externalId' | 'name' | 'email'> | null) {
  return row ? { id: row.id, externalId: row.externalId, name: row.name, email: row.email } : null;
}
