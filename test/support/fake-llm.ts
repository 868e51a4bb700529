import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A chat-completions server on loopback (the one fake of the generation tests: no model runs here). It speaks the
 * OpenAI protocol the worker's client uses — POST /v1/chat/completions with JSON in, a `chat.completion` JSON out,
 * errors as `{error:{message}}` with their status and headers — and answers by a script the test sets.
 */
export interface ChatRequest {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: { type: string; json_schema?: { name: string; strict?: boolean; schema: unknown } };
}

export type FakeAnswer =
  | { content: string; delayMs?: number }
  | { status: number; headers?: Record<string, string>; message?: string }
  | { hang: true };

export interface FakeLlm {
  /** Base URL for GENERATION_BASE_URL (`http://127.0.0.1:<port>/v1`). */
  baseUrl: string;
  /** Every request received, in order. */
  requests: ChatRequest[];
  /** The script: called with the request and its index; returns the answer. */
  answer: (req: ChatRequest, n: number) => FakeAnswer;
  close(): Promise<void>;
}

export function completion(content: string, model = 'fake') {
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null },
        finish_reason: 'stop',
        logprobs: null,
      },
    ],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

export async function startFakeLlm(answer: FakeLlm['answer'] = () => ({ content: '{}' })): Promise<FakeLlm> {
  const sockets = new Set<import('node:net').Socket>();
  const fake: FakeLlm = { baseUrl: '', requests: [], answer, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
      const n = fake.requests.push(body) - 1;
      const a = fake.answer(body, n);
      if ('hang' in a) return; // never answers; the socket is destroyed by close()
      if ('status' in a) {
        res.writeHead(a.status, { 'content-type': 'application/json', ...(a.headers ?? {}) });
        res.end(JSON.stringify({ error: { message: a.message ?? `status ${a.status}`, type: 'fake' } }));
        return;
      }
      const send = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(completion(a.content, body.model)));
      };
      if (a.delayMs) setTimeout(send, a.delayMs);
      else send();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return fake;
}

/** A well-formed course answer with `screens` screens (a heading, a text and a single-choice quiz each). */
export function goodCourse(screens = 3, title = 'Photosynthesis basics') {
  return {
    title,
    screens: Array.from({ length: screens }, (_, i) => ({
      id: 'x',
      title: `Screen ${i + 1}`,
      blocks: [
        { id: 'x', type: 'heading', text: `Part ${i + 1}`, level: 2 },
        { id: 'x', type: 'text', text: 'Plants turn light into sugar.' },
        {
          id: 'x',
          type: 'quiz_single_choice',
          question: 'What do plants make?',
          options: [
            { id: 'a', text: 'Sugar', correct: true },
            { id: 'b', text: 'Salt', correct: false },
          ],
          explanation: null,
        },
      ],
    })),
  };
}
