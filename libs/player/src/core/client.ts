/**
 * The Player API as the browser player calls it (docs/player-api.md): open or resume a run, send event
 * batches, retake. `fetch` is passed in so the status handling is unit-tested without a network.
 */
import type { Batch, SendOutcome } from './queue.js';
import type { CompletionState, EventsResponse, PlayerCourse, PollResults } from './types.js';
import { dispositionFileName } from './certificate.js';

export interface FetchInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
  keepalive?: boolean;
}
export interface FetchAnswer {
  status: number;
  json(): Promise<unknown>;
  /** What a binary answer (the certificate PDF) is read with; `fetch`'s answer has both. */
  headers?: { get(name: string): string | null };
  blob?(): Promise<Blob>;
}

/** A certificate as the player saves it: the PDF, its file name, and the serial and verify page it names. */
export interface CertificateFile {
  blob: Blob;
  fileName: string;
  serial: string | null;
  verifyUrl: string | null;
}
export type FetchLike = (url: string, init: FetchInit) => Promise<FetchAnswer>;

export interface OpenedRun {
  runToken: string;
  completion: CompletionState;
  course: PlayerCourse;
}

/** A refusal of the Player API (`{error, message}`), or `network` when no answer came. */
export class PlayerApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** `anonymousId` as the Player API takes it: 16–64 characters of `[A-Za-z0-9_-]`. */
export const ANONYMOUS_ID = /^[A-Za-z0-9_-]{16,64}$/;

export function eventOutcome(status: number, body: unknown): SendOutcome {
  if (status >= 200 && status < 300) {
    const data = (body as { data?: EventsResponse } | null)?.data;
    return { kind: 'ok', response: data ?? { completion: {} } };
  }
  if (status === 401) return { kind: 'unauthorized' };
  // 402 (workspace cannot serve right now), 408, 429 and 5xx pass: keep the batch and retry it later.
  if (status === 402 || status === 408 || status === 429 || status >= 500 || status === 0)
    return { kind: 'retry' };
  return { kind: 'rejected', status };
}

export class PlayerClient {
  constructor(
    private readonly apiBase: string,
    private readonly fetch: FetchLike,
  ) {}

  /** `apiBase` is the Player API's base (`…/player/v1`, what the embed page hands over) or its origin. */
  private url(path: string): string {
    const base = this.apiBase.replace(/\/+$/, '');
    return (base.endsWith('/player/v1') ? base : `${base}/player/v1`) + path;
  }

  async openRun(input: {
    courseId: string;
    identity?: string | null;
    lang?: string | null;
    anonymousId?: string;
    /** A SCORM package's track=1 run: the tracking token baked into it and the LMS's learner. */
    tracking?: { token: string; learnerId: string; learnerName?: string };
  }): Promise<OpenedRun> {
    const body: Record<string, unknown> = { courseId: input.courseId };
    if (input.tracking) body.tracking = input.tracking;
    else if (input.identity) body.identity = input.identity;
    else if (input.anonymousId) body.anonymousId = input.anonymousId;
    if (input.lang) body.lang = input.lang;
    return this.call<OpenedRun>('/runs', { method: 'POST', headers: json(), body: JSON.stringify(body) });
  }

  async retake(completionId: string, runToken: string): Promise<{ completion?: Partial<CompletionState> }> {
    return this.call(`/runs/${encodeURIComponent(completionId)}/retake`, {
      method: 'POST',
      headers: { ...json(), authorization: `Bearer ${runToken}` },
      body: '{}',
    });
  }

  /**
   * The run's certificate (`GET /runs/:id/certificate`; the first call issues it). A refusal (403 with the
   * reason, 504 when the render worker is slow) is a `PlayerApiError` carrying the server's message.
   */
  async certificate(completionId: string, runToken: string): Promise<CertificateFile> {
    let answer: FetchAnswer;
    try {
      answer = await this.fetch(this.url(`/runs/${encodeURIComponent(completionId)}/certificate`), {
        method: 'GET',
        headers: { accept: 'application/pdf', authorization: `Bearer ${runToken}` },
      });
    } catch (err) {
      throw new PlayerApiError(0, 'network', err instanceof Error ? err.message : 'network error');
    }
    if (answer.status !== 200 || !answer.blob) {
      const body = (await answer.json().catch(() => null)) as { error?: string; message?: string } | null;
      throw new PlayerApiError(
        answer.status,
        body?.error ?? 'unknown',
        body?.message ?? `HTTP ${answer.status}`,
      );
    }
    const header = (name: string) => answer.headers?.get(name) ?? null;
    const serial = header('certificate-serial');
    return {
      blob: await answer.blob(),
      fileName:
        dispositionFileName(header('content-disposition')) ??
        (serial ? `certificate ${serial}.pdf` : 'certificate.pdf'),
      serial,
      verifyUrl: header('certificate-verify-url'),
    };
  }

  /** A poll's results once this run voted (`GET /runs/:id/polls/:blockId`; 403 before the vote is applied). */
  async pollResults(completionId: string, runToken: string, blockId: string): Promise<PollResults> {
    return this.call(`/runs/${encodeURIComponent(completionId)}/polls/${encodeURIComponent(blockId)}`, {
      method: 'GET',
      headers: { accept: 'application/json', authorization: `Bearer ${runToken}` },
    });
  }

  async sendEvents(
    completionId: string,
    runToken: string,
    batch: Batch,
    keepalive: boolean,
  ): Promise<SendOutcome> {
    let answer: FetchAnswer;
    try {
      answer = await this.fetch(this.url(`/runs/${encodeURIComponent(completionId)}/events`), {
        method: 'POST',
        headers: { ...json(), authorization: `Bearer ${runToken}` },
        body: JSON.stringify({ batchId: batch.batchId, events: batch.events }),
        keepalive,
      });
    } catch {
      return { kind: 'retry' };
    }
    const body = await answer.json().catch(() => null);
    return eventOutcome(answer.status, body);
  }

  private async call<T>(path: string, init: FetchInit): Promise<T> {
    let answer: FetchAnswer;
    try {
      answer = await this.fetch(this.url(path), init);
    } catch (err) {
      throw new PlayerApiError(0, 'network', err instanceof Error ? err.message : 'network error');
    }
    const body = (await answer.json().catch(() => null)) as {
      data?: T;
      error?: string;
      message?: string;
    } | null;
    if (answer.status >= 200 && answer.status < 300 && body?.data !== undefined) return body.data;
    throw new PlayerApiError(
      answer.status,
      body?.error ?? 'unknown',
      body?.message ?? `HTTP ${answer.status}`,
    );
  }
}

const json = (): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'application/json',
});
