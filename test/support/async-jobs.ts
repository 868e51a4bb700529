import { z } from 'zod';
import { defineAsyncJobKind, type AsyncJobKindSpec } from '@lectern/jobs';

/** The input and result of the asynchronous kinds the job tests define for themselves (no production kind yet). */
export const TestJobInput = z.object({ label: z.string() });
export const TestJobResult = z.object({ label: z.string(), attempt: z.number().int() });

export type TestJobKind = AsyncJobKindSpec<
  string,
  z.infer<typeof TestJobInput>,
  z.infer<typeof TestJobResult>
>;

/** A test kind `test.<name>` (subject `<prefix>.jobs.test.<name>`), with its own deadline and attempts. */
export function testJobKind(name: string, limits: { deadlineMs: number; maxAttempts: number }): TestJobKind {
  return defineAsyncJobKind({ kind: `test.${name}`, input: TestJobInput, result: TestJobResult, ...limits });
}
