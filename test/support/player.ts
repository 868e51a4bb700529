import { LecternClient, type RequestBody } from '@lectern/client';
import { expect } from 'chai';
import { SignJWT } from 'jose';
import { call, type Res } from './http.js';
import type { ErrorRes } from './authoring.js';

/** A course with graded, ungraded and plain blocks over three screens; s3 is the last screen. */
export function quizScreens() {
  return [
    {
      id: 's1',
      title: 'Welcome',
      blocks: [
        { id: 'intro', type: 'text', text: 'Hello' },
        {
          id: 'q1',
          type: 'quiz_single_choice',
          question: 'Pick a',
          options: [
            { id: 'a', text: 'A', correct: true },
            { id: 'b', text: 'B' },
          ],
          explanation: 'A is right',
        },
      ],
    },
    {
      id: 's2',
      title: 'Middle',
      blocks: [
        { id: 'q2', type: 'quiz_true_false', statement: 'Water is wet', correct: true },
        {
          id: 'p1',
          type: 'poll',
          question: 'Like it?',
          options: [
            { id: 'y', text: 'Yes' },
            { id: 'n', text: 'No' },
          ],
        },
        { id: 'note', type: 'instructor_note', text: 'secret facilitator text' },
      ],
    },
    { id: 's3', title: 'Done', blocks: [{ id: 'end', type: 'text', text: 'Bye' }] },
  ];
}

/**
 * One batch through every screen of `quizScreens()` with both graded blocks answered (right unless told), ending on
 * the last screen: a finished run, scoring 100 when both are right.
 */
export function quizFinishEvents(answers: { q1?: 'a' | 'b'; q2?: boolean } = {}) {
  return [
    { type: 'screen', screenId: 's1' },
    { type: 'answer', blockId: 'q1', answer: answers.q1 ?? 'a' },
    { type: 'screen', screenId: 's2' },
    { type: 'answer', blockId: 'q2', answer: answers.q2 ?? true },
    { type: 'screen', screenId: 's3' },
  ];
}

export type PlayerRes<T = Record<string, unknown>> = Res<{ data: T } & Partial<ErrorRes>>;

export function playerApi(url: string) {
  return <T = Record<string, unknown>>(
    method: string,
    path: string,
    opts: { body?: unknown; token?: string; headers?: Record<string, string> } = {},
  ): Promise<PlayerRes<T>> =>
    call<{ data: T } & Partial<ErrorRes>>(`${url}/player/v1`, method, path, {
      body: opts.body,
      key: opts.token,
      headers: opts.headers,
    });
}

/** Creates a course through the API and publishes it (with the typed client, as an integration would); its id. */
export async function publishedCourse(
  base: string,
  key: string,
  body: Record<string, unknown> = {},
): Promise<string> {
  const lectern = new LecternClient({ baseUrl: base, apiKey: key });
  const created = await lectern.createCourse({
    body: { title: 'Safety 101', screens: quizScreens(), ...body } as RequestBody<'createCourse'>,
  });
  const { data } = await lectern.updateCourse({
    params: { id: created.data.id },
    body: { status: 'published' },
  });
  expect(data.status).to.equal('published');
  return data.id;
}

export async function createEmbedKey(base: string, key: string): Promise<{ id: string; secret: string }> {
  const lectern = new LecternClient({ baseUrl: base, apiKey: key });
  const { data } = await lectern.createEmbedKey({ body: { name: 'backend' } });
  return { id: data.id, secret: data.secret };
}

/** An identity token as a customer's backend signs it. */
export async function signIdentity(
  embedKey: { id: string; secret: string },
  claims: Record<string, unknown> = {},
  opts: { expiresIn?: number | null; sub?: string | null; alg?: string; kid?: string | null } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload: Record<string, unknown> = { ...claims };
  if (opts.sub !== null) payload.sub = opts.sub ?? 'learner-1';
  if (opts.expiresIn !== null) payload.exp = now + (opts.expiresIn ?? 3600);
  const header: { alg: string; kid?: string } = { alg: opts.alg ?? 'HS256' };
  if (opts.kid !== null) header.kid = opts.kid ?? embedKey.id;
  return new SignJWT(payload)
    .setProtectedHeader(header)
    .setIssuedAt()
    .sign(new TextEncoder().encode(embedKey.secret));
}

/** An unsecured JWT (`alg: none`): header and payload, empty signature. */
export function unsignedToken(kid: string, sub = 'learner-1'): string {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${b64({ alg: 'none', kid })}.${b64({ sub, exp: Math.floor(Date.now() / 1000) + 3600 })}.`;
}

export const anonymousId = (n = 1) => `anon-${String(n).padStart(4, '0')}-abcdefghij`;
