import { AppError } from '@lectern/errors';
import type { GenerationJobInput } from '@lectern/contracts';
import type { OutboundRequestOptions } from '@lectern/outbound';
import { assembleCourse, type AssembledCourse } from './assemble.js';
import { courseMessages, repairMessages } from './prompt.js';
import type { GenerationProvider } from './provider.js';
import { courseJsonSchema, SCHEMA_NAMES } from './schemas.js';
import { fetchSourceText } from './source.js';

export interface GenerateDeps {
  provider: GenerationProvider;
  /** The outbound policy for `sourceUrl` (ALLOW_PRIVATE_NETWORKS). */
  outbound: Pick<OutboundRequestOptions, 'allowPrivate' | 'isForbidden' | 'lookup'>;
}

const failed = (message: string, cause?: unknown) =>
  new AppError('invalid_request', message, { retryable: false, cause });

function parseAnswer(text: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  // Some servers wrap JSON in a Markdown fence even in JSON mode.
  const unfenced = text.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/i, '$1');
  try {
    return { ok: true, value: JSON.parse(unfenced) };
  } catch (err) {
    return { ok: false, problem: `invalid JSON: ${(err as Error).message}` };
  }
}

/**
 * The model half of a generation job, without the database: the source text (if any), the `course` call, one
 * repair call when the answer is not JSON, and the checked screens. Pure I/O, so a bench or test can call it in
 * process; the job handler writes the course.
 */
export async function generateCourse(
  deps: GenerateDeps,
  input: GenerationJobInput,
  signal: AbortSignal,
): Promise<AssembledCourse> {
  let source: string | null = null;
  if (input.sourceUrl) {
    const fetched = await fetchSourceText(input.sourceUrl, deps.outbound);
    if (!fetched.ok) throw failed(`The source ${input.sourceUrl} could not be used: ${fetched.reason}`);
    source = fetched.text;
  }
  if (signal.aborted) throw signal.reason as Error;
  const messages = courseMessages(input, source);
  const call = { schemaName: SCHEMA_NAMES.course, schema: courseJsonSchema(), signal };
  const first = await deps.provider.complete({ ...call, messages });
  let parsed = parseAnswer(first);
  if (!parsed.ok) {
    const second = await deps.provider.complete({
      ...call,
      messages: repairMessages(messages, first, parsed.problem),
    });
    parsed = parseAnswer(second);
    if (!parsed.ok) {
      throw failed(`The model did not answer with valid JSON, twice (one repair attempt): ${parsed.problem}`);
    }
  }
  return assembleCourse(parsed.value, input.screensTarget);
}
