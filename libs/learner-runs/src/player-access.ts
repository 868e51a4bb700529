import { boundQuery, type EntityManager } from '@lectern/db';
import { AppError } from '@lectern/errors';
import { normaliseOrigin, type PlayerSettingsDto, type UpdatePlayerSettings } from '@lectern/contracts';

/**
 * Who may spend a workspace's views (docs/player-api.md "Who may open runs"). SPEC meters every open, so the
 * customer decides who may open: the origins allowed to frame the embed page and to open runs, and whether
 * anonymous runs are served at all. No row means today's defaults: any origin, anonymous runs on.
 */
export interface PlayerAccess {
  /** Normalised origins (`https://a.example`, `https://*.example.com`); null: any origin. */
  allowedOrigins: string[] | null;
  anonymousRuns: boolean;
}

export const OPEN_ACCESS: PlayerAccess = { allowedOrigins: null, anonymousRuns: true };

export async function getPlayerSettings(em: EntityManager, workspaceId: string): Promise<PlayerSettingsDto> {
  const [row] = await boundQuery<{ allowed_origins: string[] | null; anonymous_runs: boolean }>(
    em,
    'select allowed_origins, anonymous_runs from player_settings where workspace_id = ?',
    [workspaceId],
  );
  return row
    ? { allowedOrigins: row.allowed_origins, anonymousRuns: row.anonymous_runs }
    : { ...OPEN_ACCESS };
}

/** Applies the fields present (an absent field keeps its value) in one upsert; answers the settings now. */
export async function updatePlayerSettings(
  em: EntityManager,
  workspaceId: string,
  patch: UpdatePlayerSettings,
): Promise<PlayerSettingsDto> {
  const origins = patch.allowedOrigins ? JSON.stringify([...new Set(patch.allowedOrigins)]) : null;
  const [row] = await boundQuery<{ allowed_origins: string[] | null; anonymous_runs: boolean }>(
    em,
    `insert into player_settings as p (workspace_id, allowed_origins, anonymous_runs, updated_at)
     values (?, case when ? then ?::jsonb end, coalesce(?::boolean, true), now())
     on conflict (workspace_id) do update set
       allowed_origins = case when ? then excluded.allowed_origins else p.allowed_origins end,
       anonymous_runs = coalesce(?::boolean, p.anonymous_runs),
       updated_at = now()
     returning allowed_origins, anonymous_runs`,
    [
      workspaceId,
      patch.allowedOrigins !== undefined,
      origins,
      patch.anonymousRuns ?? null,
      patch.allowedOrigins !== undefined,
      patch.anonymousRuns ?? null,
    ],
  );
  return { allowedOrigins: row.allowed_origins, anonymousRuns: row.anonymous_runs };
}

/** Whether a normalised request origin matches an entry: exactly, or as a subdomain of a `*.` entry. */
function matches(entry: string, origin: string): boolean {
  if (entry === origin) return true;
  const star = entry.indexOf('*.');
  if (star < 0) return false;
  const scheme = entry.slice(0, star);
  const rest = entry.slice(star + 1); // `.example.com[:port]`
  return origin.startsWith(scheme) && origin.endsWith(rest) && origin.length > scheme.length + rest.length;
}

/**
 * A run open's `Origin` against the workspace's list. The service's own origin (its embed page, whose framing
 * the list already restricts through frame-ancestors) always passes. With a list, an open without an Origin, or
 * with an opaque one (`null`: a sandboxed frame, a file), is refused too: a browser always sends one with a
 * cross-origin POST, so only a script could leave it out. 403 `origin_not_allowed`; nothing is counted.
 */
export function assertOriginAllowed(
  access: PlayerAccess,
  origin: string | undefined,
  ownOrigin: string,
): void {
  if (access.allowedOrigins === null) return;
  const normalised = origin ? normaliseOrigin(origin) : null;
  if (
    normalised !== null &&
    (normalised === ownOrigin || access.allowedOrigins.some((e) => matches(e, normalised)))
  )
    return;
  throw new AppError(
    'origin_not_allowed',
    origin
      ? `Runs of this course may not be opened from ${JSON.stringify(origin)}: the workspace allows other origins only (player settings, allowedOrigins)`
      : 'Send the Origin header: the workspace allows run opens from listed origins only (player settings, allowedOrigins)',
  );
}

/** 401 for an anonymous open when the workspace requires a signed identity; nothing is counted. */
export function assertAnonymousAllowed(access: PlayerAccess): void {
  if (!access.anonymousRuns)
    throw new AppError(
      'unauthorized',
      'This workspace serves signed learners only: send identity (a token signed with an embed key), not anonymousId',
    );
}

/**
 * The `frame-ancestors` sources of the embed page (and any page that frames the player) for a workspace: `'self'`
 * and its allowed origins, or `*` when it lists none (any site may embed, as before the setting existed).
 */
export function frameAncestors(access: Pick<PlayerAccess, 'allowedOrigins'>): readonly string[] {
  if (access.allowedOrigins === null) return ['*'];
  return ["'self'", ...access.allowedOrigins];
}

/** `frameAncestors` of a workspace, read from the database (for a page that did not read its settings yet). */
export async function frameAncestorsOf(em: EntityManager, workspaceId: string): Promise<readonly string[]> {
  return frameAncestors(await getPlayerSettings(em, workspaceId));
}
