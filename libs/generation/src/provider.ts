import OpenAI from 'openai';
import { AppError } from '@lectern/errors';
import type { JsonSchema } from './schemas.js';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** One structured-output call: the messages and the schema the answer must meet, by name. */
export interface ModelCall {
  schemaName: string;
  schema: JsonSchema;
  messages: ChatMessage[];
  /** Fires at the job's deadline: the call and its retries stop. */
  signal: AbortSignal;
}

/** The one provider interface: the answer's text (JSON, checked by the caller). */
export interface GenerationProvider {
  complete(call: ModelCall): Promise<string>;
}

export interface OpenAiProviderSettings {
  baseUrl: string;
  apiKey?: string | undefined;
  model: string;
  /** Cap of one HTTP attempt (the job's deadline caps them all through the signal). */
  attemptTimeoutMs?: number;
  /** Waits between retries, in ms, before the jitter; a 429's Retry-After wins when given. */
  backoffMs?: readonly number[];
}

const DEFAULT_BACKOFF = [500, 1000, 2000, 4000, 8000] as const;
/** A Retry-After beyond this is not waited for: the job fails now rather than at its deadline. */
const MAX_RETRY_AFTER_MS = 60_000;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function retryAfterMs(headers: Headers | undefined): number | null {
  const raw = headers?.get('retry-after');
  if (!raw) return null;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(raw);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : null;
}

/** Transient: 408, 409, 429, 5xx, a connection failure or an attempt that timed out. */
function transient(err: unknown): boolean {
  if (err instanceof OpenAI.APIConnectionError) return true; // includes APIConnectionTimeoutError
  if (err instanceof OpenAI.APIError) {
    const s = err.status ?? 0;
    return s === 408 || s === 409 || s === 429 || s >= 500;
  }
  return false;
}

function describe(err: unknown): string {
  if (err instanceof OpenAI.APIError && err.status) return `HTTP ${err.status}`;
  if (err instanceof OpenAI.APIConnectionTimeoutError) return 'timed out';
  if (err instanceof OpenAI.APIConnectionError) return 'unreachable';
  return err instanceof Error ? err.message : String(err);
}

/**
 * The OpenAI chat-completions protocol through the official client, at any base URL (OpenAI, Azure OpenAI's
 * v1 endpoint, Ollama, vLLM, LM Studio, llama.cpp server). The client's own retries are off: this one retries
 * transient failures with backoff (a 429's Retry-After honoured) until the job's deadline.
 */
export function openAiProvider(settings: OpenAiProviderSettings): GenerationProvider {
  const client = new OpenAI({
    baseURL: settings.baseUrl,
    // Local servers take none; the client insists on a string.
    apiKey: settings.apiKey ?? 'none',
    maxRetries: 0,
    timeout: settings.attemptTimeoutMs ?? 60_000,
  });
  const backoff = settings.backoffMs ?? DEFAULT_BACKOFF;
  return {
    async complete(call) {
      for (let attempt = 0; ; attempt++) {
        try {
          const res = await client.chat.completions.create(
            {
              model: settings.model,
              messages: call.messages,
              temperature: 0.4,
              response_format: {
                type: 'json_schema',
                json_schema: { name: call.schemaName, strict: true, schema: call.schema },
              },
            },
            { signal: call.signal },
          );
          const content = res.choices?.[0]?.message?.content;
          if (typeof content !== 'string' || content.trim() === '') {
            throw new AppError('unavailable', 'The model returned an empty answer', { retryable: false });
          }
          return content;
        } catch (err) {
          if (call.signal.aborted) throw call.signal.reason as Error;
          if (!transient(err) || attempt >= backoff.length) {
            throw new AppError(
              'unavailable',
              `The model provider failed (${describe(err)})${attempt > 0 ? ` after ${attempt + 1} attempts` : ''}`,
              { retryable: false, cause: err },
            );
          }
          const base = backoff[attempt] ?? backoff[backoff.length - 1] ?? 1000;
          const hinted = err instanceof OpenAI.APIError ? retryAfterMs(err.headers) : null;
          if (hinted !== null && hinted > MAX_RETRY_AFTER_MS) {
            throw new AppError(
              'unavailable',
              `The model provider is rate limited for ${Math.ceil(hinted / 1000)} s`,
              {
                retryable: false,
                cause: err,
              },
            );
          }
          await sleep(hinted ?? base * (0.75 + Math.random() / 2), call.signal);
        }
      }
    },
  };
}
