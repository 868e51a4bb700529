import { pipeline, type Readable } from 'node:stream';
import type { Context } from 'koa';
import type { EntityManager } from '@lectern/db';
import {
  claimIdempotencyKey,
  drainForFingerprint,
  hashingTap,
  parseIdempotencyKey,
  type IdempotencyClaim,
  type IdempotencyScope,
} from '@lectern/idempotency';
import type { AuthState } from './auth.js';

/**
 * The Idempotency-Key header on a route (libs/idempotency; docs/generation.md "Idempotency"). `scope` is the
 * route's operationId. Null without the header; 400 for a malformed one.
 */
export function idempotencyScopeOf(ctx: Context, scope: string): IdempotencyScope | null {
  const key = parseIdempotencyKey(ctx.req.headers['idempotency-key']);
  if (key === null) return null;
  return { workspaceId: (ctx.state.auth as AuthState).workspace.id, scope, key };
}

/** A stored first answer, sent again: 200 whatever the first status was, and nothing runs. */
export function replay(ctx: Context, body: unknown): void {
  ctx.status = 200;
  ctx.body = body;
  ctx.set('Idempotent-Replayed', 'true');
}

async function runClaimed(
  ctx: Context,
  claim: IdempotencyClaim,
  run: () => Promise<void>,
  fingerprint?: () => string,
): Promise<void> {
  try {
    await run();
  } catch (err) {
    await claim.released();
    throw err;
  }
  if (ctx.status >= 200 && ctx.status < 300) await claim.succeeded(ctx.body, fingerprint?.());
  else await claim.released();
}

/**
 * For a route whose body is known before it runs (JSON, a raw body read whole): `fingerprint` is its hash
 * (`fingerprintJson`, `fingerprintBytes`). Same key and body → the first answer (200), `run` not called; same key,
 * other body → 409; no key → `run` as it is. A failed `run` frees the key.
 */
export async function withIdempotency(
  ctx: Context,
  em: EntityManager,
  opts: { scope: string; fingerprint: string },
  run: () => Promise<void>,
): Promise<void> {
  const id = idempotencyScopeOf(ctx, opts.scope);
  if (!id) return run();
  const found = await claimIdempotencyKey(em, id, opts.fingerprint);
  if (found.state === 'replay') return replay(ctx, found.body);
  return runClaimed(ctx, found, run);
}

/**
 * For a streamed upload (SCORM import; POST /media can use the same through `claimIdempotencyKey` directly): the
 * fingerprint is the hash of the bytes as they stream. A first request runs on the hashed stream and stores its
 * answer with the hash; a repeat reads the body only to hash it (still capped by `limit`) and then answers 200
 * or 409. `extra` folds the query string into the fingerprint.
 */
export async function withStreamedIdempotency(
  ctx: Context,
  em: EntityManager,
  opts: { scope: string; stream: Readable; limit: number; tooLarge: () => Error; extra?: string },
  run: (body: Readable) => Promise<void>,
): Promise<void> {
  const id = idempotencyScopeOf(ctx, opts.scope);
  if (!id) return run(opts.stream);
  const found = await claimIdempotencyKey(em, id);
  if (found.state === 'stored') {
    let fingerprint: string;
    try {
      fingerprint = await drainForFingerprint(opts.stream, opts.extra ?? '', opts);
    } catch (err) {
      ctx.req.resume();
      throw err;
    }
    return replay(ctx, found.answerFor(fingerprint).body);
  }
  const tap = hashingTap(opts.extra ?? '');
  pipeline(opts.stream, tap.stream, () => {});
  return runClaimed(ctx, found, () => run(tap.stream), tap.digest);
}
