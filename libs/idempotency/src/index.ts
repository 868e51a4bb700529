/**
 * The Idempotency-Key mechanism (docs/generation.md "Idempotency"): one table, one claim, shared by every POST
 * route that creates something expensive (POST /generate, the SCORM and CSV imports, POST /media).
 *
 * A key is scoped to the workspace and the route (`scope`, the route's operationId): the same key on two routes
 * is two keys. The first request with a key claims it (a row with no answer yet); when it succeeds its answer is
 * stored, and for 24 hours the same key with the same body fingerprint gets that answer back (200) and runs
 * nothing; with another fingerprint it is a 409 `conflict`. A request that fails releases its claim, so a retry
 * with the same key runs again. While the first request runs, another with the same key is a 409 too.
 *
 * The fingerprint is the caller's: a JSON route hashes its parsed body (`fingerprintJson`), a raw-body route the
 * bytes (`fingerprintBytes`), and a streamed upload the bytes as they stream (`hashingTap`), supplying it after
 * the body was read (`IdempotencyClaim.succeeded(body, fingerprint)`; `StoredKey.answerFor(fingerprint)`).
 */
import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { AppError } from '@lectern/errors';
import { boundQuery, type EntityManager } from '@lectern/db';

/** How long a stored answer is replayed. */
export const IDEMPOTENCY_TTL_HOURS = 24;
export const IDEMPOTENCY_KEY_MAX = 255;
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** Header value → key, or null when absent. Refused (400): empty, over 255 characters, or not visible ASCII. */
export function parseIdempotencyKey(raw: string | string[] | undefined): string | null {
  if (raw === undefined) return null;
  const value = Array.isArray(raw) ? null : raw.trim();
  if (value === null || value === '' || value.length > IDEMPOTENCY_KEY_MAX || !/^[\x21-\x7e]+$/.test(value)) {
    throw new AppError(
      'invalid_request',
      `${IDEMPOTENCY_HEADER} must be given once, 1–${IDEMPOTENCY_KEY_MAX} visible ASCII characters`,
      {
        issues: [
          {
            code: 'invalid_idempotency_key',
            path: ['headers', IDEMPOTENCY_HEADER],
            message: `1–${IDEMPOTENCY_KEY_MAX} visible ASCII characters, given once`,
          },
        ],
      },
    );
  }
  return value;
}

/** Canonical JSON (keys sorted) → sha256 hex: `{a:1,b:2}` and `{b:2,a:1}` are the same body. */
export function fingerprintJson(value: unknown): string {
  return createHash('sha256').update(canonical(value)).digest('hex');
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** sha256 hex of raw bytes, with what else identifies the request (a query string) folded in. */
export function fingerprintBytes(body: Buffer, extra = ''): string {
  return createHash('sha256').update(extra).update('\0').update(body).digest('hex');
}

/** A pass-through that hashes what streams through it; `digest()` once the stream has ended. */
export function hashingTap(extra = ''): { stream: Transform; digest(): string } {
  const hash = createHash('sha256').update(extra).update('\0');
  // Hashes in transform(), not on 'data': a listener would start the flow before the consumer is attached.
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  let done: string | null = null;
  return { stream, digest: () => (done ??= hash.digest('hex')) };
}

/**
 * Reads a stream to its end for its hash only (a replay's body is not used, only compared); past `limit` bytes it
 * stops and throws `tooLarge()`.
 */
export async function drainForFingerprint(
  stream: NodeJS.ReadableStream,
  extra = '',
  cap?: { limit: number; tooLarge: () => Error },
): Promise<string> {
  const hash = createHash('sha256').update(extra).update('\0');
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (cap && size > cap.limit) throw cap.tooLarge();
    hash.update(chunk as Buffer);
  }
  return hash.digest('hex');
}

export interface IdempotencyScope {
  workspaceId: string;
  /** The route, by its operationId. */
  scope: string;
  key: string;
}

/** A stored answer to send again (with 200). */
export interface Replay {
  state: 'replay';
  body: unknown;
}

/** The key is this request's: run, then record the answer or release the key. */
export interface IdempotencyClaim {
  state: 'claimed';
  /** Stores the answer to replay; `fingerprint` when it was not known at the claim (a streamed body). */
  succeeded(body: unknown, fingerprint?: string): Promise<void>;
  /** The request failed: the key is free again. */
  released(): Promise<void>;
}

/** The key was used before and the fingerprint was not known at the claim: compare it now. */
export interface StoredKey {
  state: 'stored';
  /** The stored answer when `fingerprint` matches; 409 `conflict` when not, or while the first still runs. */
  answerFor(fingerprint: string): Replay;
}

interface KeyRow {
  fingerprint: string | null;
  response: unknown;
  claimed: boolean;
}

function conflictOther(): AppError {
  return new AppError(
    'conflict',
    `This ${IDEMPOTENCY_HEADER} was used with another request body in the last ${IDEMPOTENCY_TTL_HOURS} hours; use a new key for a new request`,
  );
}

function conflictRunning(): AppError {
  return new AppError(
    'conflict',
    `A request with this ${IDEMPOTENCY_HEADER} is still being processed; retry when it has answered`,
  );
}

function answerOf(row: KeyRow, fingerprint: string): Replay {
  if (row.fingerprint !== null && row.fingerprint !== fingerprint) throw conflictOther();
  if (row.response === null) throw conflictRunning();
  return { state: 'replay', body: row.response };
}

/**
 * Claims `key` for this request, or finds it used. With `fingerprint`: a replay (same body, answered), a claim,
 * or a 409. Without (the body is read later): a claim or a `StoredKey` to compare once the body's hash is known.
 * A key older than 24 hours is claimed afresh. Runs in its own statements (not the caller's transaction), so a
 * claim is visible to concurrent requests at once.
 */
export async function claimIdempotencyKey(
  em: EntityManager,
  id: IdempotencyScope,
  fingerprint: string,
): Promise<Replay | IdempotencyClaim>;
export async function claimIdempotencyKey(
  em: EntityManager,
  id: IdempotencyScope,
): Promise<StoredKey | IdempotencyClaim>;
export async function claimIdempotencyKey(
  em: EntityManager,
  id: IdempotencyScope,
  fingerprint?: string,
): Promise<Replay | StoredKey | IdempotencyClaim> {
  const params = [id.workspaceId, id.scope, id.key];
  const claimed = await boundQuery<{ key: string }>(
    em,
    `insert into idempotency_keys (workspace_id, scope, key, fingerprint, response, created_at)
     values (?, ?, ?, ?, null, now())
     on conflict (workspace_id, scope, key) do update
       set fingerprint = excluded.fingerprint, response = null, created_at = now()
       where idempotency_keys.created_at < now() - ?::int * interval '1 hour'
     returning key`,
    [...params, fingerprint ?? null, IDEMPOTENCY_TTL_HOURS],
  );
  if (claimed.length > 0) {
    return {
      state: 'claimed',
      async succeeded(body, late) {
        await boundQuery(
          em,
          `update idempotency_keys set response = ?::jsonb, fingerprint = coalesce(fingerprint, ?)
           where workspace_id = ? and scope = ? and key = ?`,
          [JSON.stringify(body ?? null), late ?? null, ...params],
        );
      },
      async released() {
        await boundQuery(
          em,
          'delete from idempotency_keys where workspace_id = ? and scope = ? and key = ? and response is null',
          params,
        );
      },
    };
  }
  const [row] = await boundQuery<KeyRow>(
    em,
    `select fingerprint, response, true as claimed from idempotency_keys
     where workspace_id = ? and scope = ? and key = ?`,
    params,
  );
  // Released between the two statements: another request is retrying with this key right now.
  if (!row) throw conflictRunning();
  if (fingerprint !== undefined) return answerOf(row, fingerprint);
  return { state: 'stored', answerFor: (fp) => answerOf(row, fp) };
}
