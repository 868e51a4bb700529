import { createInbox, headers, type Msg, type NatsConnection } from '@nats-io/transport-node';

/** What JetStream answers a stored (or deduplicated) publish with. */
export interface PubAck {
  stream: string;
  seq: number;
  duplicate: boolean;
}

/**
 * Why a publish was not acknowledged: `timeout` (no answer in time: the message may or may not be stored),
 * `no_stream` (no stream takes the subject, or JetStream is off), `refused` (JetStream answered with an error,
 * e.g. a full stream, or the client refused the subject), `closed` (the connection closed, or is draining, before
 * the answer).
 */
export class PublishError extends Error {
  constructor(
    readonly reason: 'timeout' | 'no_stream' | 'refused' | 'closed',
    message: string,
    readonly subject: string,
  ) {
    super(message);
    this.name = 'PublishError';
  }
}

interface Pending {
  subject: string;
  expires: number;
  resolve(ack: PubAck): void;
  reject(err: PublishError): void;
}

const decoder = new TextDecoder();

/**
 * JetStream publishes as the protocol has them: a core publish with a reply subject, its acknowledgement a
 * message to that subject. All of one connection's acknowledgements come to one wildcard inbox subscription and
 * are matched to their publish by the reply's last token, and one timer sweeps the expired ones: the Go client's
 * `PublishAsync`, which nats.js does not offer. Its `js.publish` costs three times the CPU per message (a request
 * object, a timer and a rejected promise per publish, options copied twice); the outbox relay publishes every
 * event of every learner batch, so that was a quarter of the API's CPU per batch (test/bench/README.md).
 */
export class JetStreamPublisher {
  private readonly inbox = createInbox();
  private readonly pending = new Map<string, Pending>();
  private next = 0;
  private sweeper: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly nc: NatsConnection) {
    nc.subscribe(`${this.inbox}.*`, { callback: (err, m) => (err ? undefined : this.settle(m)) });
    void nc.closed().then(() => {
      this.closed = true;
      this.failAll('closed', 'the NATS connection closed before JetStream acknowledged the publish');
    });
  }

  /** Publishes `data` to `subject` and resolves with JetStream's acknowledgement; `msgId` deduplicates. */
  publish(
    subject: string,
    data: string | Uint8Array,
    opts: { msgId?: string; timeoutMs: number },
  ): Promise<PubAck> {
    if (this.closed)
      return Promise.reject(new PublishError('closed', 'the NATS connection is closed', subject));
    const key = (this.next++).toString(36);
    return new Promise<PubAck>((resolve, reject) => {
      this.pending.set(key, { subject, expires: Date.now() + opts.timeoutMs, resolve, reject });
      try {
        const h = opts.msgId ? headers() : undefined;
        h?.set('Nats-Msg-Id', opts.msgId as string);
        this.nc.publish(subject, data, { reply: `${this.inbox}.${key}`, headers: h });
      } catch (err) {
        // nats.js refuses synchronously on a closed or draining connection, or a malformed subject.
        this.pending.delete(key);
        const gone = this.nc.isClosed() || this.nc.isDraining();
        reject(
          new PublishError(gone ? 'closed' : 'refused', `publish failed: ${(err as Error).message}`, subject),
        );
        return;
      }
      this.sweeper ??= setInterval(() => this.sweep(), 100).unref();
    });
  }

  private settle(m: Msg): void {
    const key = m.subject.slice(this.inbox.length + 1);
    const p = this.pending.get(key);
    if (!p) return; // answered after its timeout
    this.pending.delete(key);
    this.idle();
    if (m.data.length === 0 && m.headers?.code === 503) {
      p.reject(new PublishError('no_stream', `no JetStream stream takes ${p.subject}`, p.subject));
      return;
    }
    let ack: { stream?: string; seq?: number; duplicate?: boolean; error?: { description?: string } };
    try {
      ack = JSON.parse(decoder.decode(m.data)) as typeof ack;
    } catch {
      ack = {};
    }
    if (ack.error || !ack.stream || typeof ack.seq !== 'number') {
      const why = ack.error?.description ?? 'an answer that is not an acknowledgement';
      p.reject(
        new PublishError('refused', `JetStream refused the publish to ${p.subject}: ${why}`, p.subject),
      );
      return;
    }
    p.resolve({ stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate === true });
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, p] of this.pending) {
      if (p.expires > now) continue;
      this.pending.delete(key);
      p.reject(
        new PublishError(
          'timeout',
          `JetStream did not acknowledge the publish to ${p.subject} in time`,
          p.subject,
        ),
      );
    }
    this.idle();
  }

  private failAll(reason: PublishError['reason'], message: string): void {
    for (const p of this.pending.values()) p.reject(new PublishError(reason, message, p.subject));
    this.pending.clear();
    this.idle();
  }

  /** Stops the sweeper once nothing waits. */
  private idle(): void {
    if (this.pending.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }
}
