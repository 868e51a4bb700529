import { expect } from 'chai';
import type { CourseDto } from '@lectern/contracts';
import { call, type Res } from './http.js';

/** The error body of SPEC.md "Errors". */
export interface ErrorRes {
  error: string;
  message: string;
  issues?: { code: string; path: (string | number)[]; message: string }[];
  requiredPlan?: string;
}

/** A JSON response whose body is either `{data}` or an error. */
export type ApiRes<T> = Res<{ data: T } & Partial<ErrorRes>>;

export function api(base: string, key: string) {
  return <T = unknown>(method: string, path: string, body?: unknown): Promise<ApiRes<T>> =>
    call<{ data: T } & Partial<ErrorRes>>(base, method, path, { key, body });
}

/** `n` screens of one text block each; ids are `<prefix><i>` and `<prefix><i>-b`. */
export function screensOf(n: number, prefix = 's') {
  return Array.from({ length: n }, (_, i) => ({
    id: `${prefix}${i + 1}`,
    title: `Screen ${i + 1}`,
    blocks: [{ id: `${prefix}${i + 1}-b`, type: 'text', text: `Text ${i + 1}` }],
  }));
}

export function expectStatus<T>(res: ApiRes<T>, status: number): void {
  expect(res.status, `${res.status} ${res.text}`).to.equal(status);
}

/** 400 invalid_request with an issue at exactly `path` (and `code`, when given). */
export function expectIssue<T>(res: ApiRes<T>, path: (string | number)[], code?: string): void {
  expect(res.status, res.text).to.equal(400);
  expect(res.body.error).to.equal('invalid_request');
  const hit = (res.body.issues ?? []).find((i) => JSON.stringify(i.path) === JSON.stringify(path));
  expect(hit, `no issue at ${JSON.stringify(path)} in ${res.text}`).to.not.equal(undefined);
  if (code) expect(hit!.code, res.text).to.equal(code);
  expect(hit!.message).to.be.a('string').and.not.equal('');
}

export function expectPlanRequired<T>(res: ApiRes<T>, planLabel: string): void {
  expect(res.status, res.text).to.equal(403);
  expect(res.body.error).to.equal('plan_required');
  expect(res.body.message).to.include(planLabel);
}

export function expectNotFound<T>(res: ApiRes<T>): void {
  expect(res.status, res.text).to.equal(404);
  expect(res.body.error).to.equal('not_found');
}

export type { CourseDto };
