import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { makeWorkspace, startTestApp, type TestApp } from '../support/context.js';
import { api, expectIssue, expectNotFound, expectPlanRequired, expectStatus } from '../support/authoring.js';
import { avSample, pngOf, rssGrowthDuring, uploadChunked, uploadForm } from '../support/media.js';
import { boundQuery, type PlanName } from '@lectern/db';
import { MEDIA_MAX_BYTES } from '@lectern/media';
import { STREAM_PART_SIZE } from '@lectern/storage';
import { sweepJobs } from '@lectern/jobs';
import type { MediaDto } from '@lectern/contracts';

describe('media: POST/GET/DELETE /api/v1/media (issue 21, docs/media.md)', () => {
  let app: TestApp;
  before(async () => {
    // Small storage lines so the quota is crossed without writing gigabytes (MEDIA_STORAGE_LIMITS, test-only).
    app = await startTestApp({ MEDIA_STORAGE_LIMITS: 'sandbox=200000,build=' });
  });
  after(async () => app?.close());
  const em = () => app.rt.orm.em.fork();
  const workspace = async (plan: PlanName = 'build') => {
    const ws = await makeWorkspace(em(), plan, 'Media');
    return { ws, req: api(app.base, ws.key) };
  };
  const objectsOf = async (wsId: string) => {
    const names: string[] = [];
    const stream = app.rt.storage.client.listObjectsV2(app.rt.storage.bucket, `media/${wsId}/`, true);
    for await (const o of stream as AsyncIterable<{ name: string }>) names.push(o.name);
    return names;
  };
  /** Multipart uploads the loopback store still holds parts of (none once every upload completed or aborted). */
  const pendingParts = async () =>
    readdir(path.join(app.rt.cfg.DATA_DIR, 's3', app.rt.storage.bucket, '._S3rver_uploads')).catch(() => []);
  const rowsOf = async (wsId: string) =>
    (
      await boundQuery<{ n: string }>(em(), 'select count(*) as n from media where workspace_id = ?', [wsId])
    )[0]!.n;
  const used = async (wsId: string) =>
    (
      await boundQuery<{ used_bytes: string; reserved_bytes: string }>(
        em(),
        'select used_bytes, reserved_bytes from workspace_storage where workspace_id = ?',
        [wsId],
      )
    )[0] ?? { used_bytes: '0', reserved_bytes: '0' };

  /** A refused upload keeps nothing: no row, no object, no parts of a multipart upload, no bytes counted. */
  const expectNothingKept = async (wsId: string) => {
    expect(await rowsOf(wsId)).to.equal('0');
    expect(await objectsOf(wsId)).to.deep.equal([]);
    expect(await pendingParts()).to.deep.equal([]);
    expect(await used(wsId)).to.deep.equal({ used_bytes: '0', reserved_bytes: '0' });
  };

  it('a PNG → 201 {id, url: media://<id>, previewUrl, kind, bytes}; previewUrl returns exactly the bytes with image/png', async () => {
    const { ws } = await workspace();
    const png = await pngOf(64, 48);
    // The declared part type and filename lie: the bytes decide.
    const res = await uploadForm(app.base, ws.key, {
      file: { bytes: png, name: 'x.exe', type: 'text/html' },
    });
    expectStatus(res, 201);
    const d = res.body.data;
    expect(d.url).to.equal(`media://${d.id}`);
    expect(d.kind).to.equal('image');
    expect(d.bytes).to.equal(png.length);
    expect(d.contentType).to.equal('image/png');
    expect(d.status).to.equal('processing');
    expect(res.headers.get('location')).to.equal(`/api/v1/media/${d.id}`);
    const got = await fetch(d.previewUrl);
    expect(got.status).to.equal(200);
    expect(got.headers.get('content-type')).to.equal('image/png');
    expect(Buffer.from(await got.arrayBuffer()).equals(png)).to.equal(true);
    // A tampered signature gets nothing.
    const tampered = d.previewUrl.replace(
      /(X-Amz-Signature=)([0-9a-f])/,
      (_m, p: string, c: string) => p + (c === '0' ? '1' : '0'),
    );
    expect((await fetch(tampered)).status).to.equal(403);
    // The stored url is an identifier, not an address.
    expect(d.url.startsWith('http')).to.equal(false);
    const me = await api(app.base, ws.key)<never>('GET', '/me');
    expect((me.body as unknown as { storageBytes: number }).storageBytes).to.equal(png.length);
  });

  it('Idempotency-Key: the same file and kind again → 200 with the first answer, nothing stored twice; another file → 409', async () => {
    const { ws } = await workspace();
    const png = await pngOf(20, 10);
    const headers = { 'idempotency-key': 'upload-1' };
    const first = await uploadForm(app.base, ws.key, { file: { bytes: png }, headers });
    expectStatus(first, 201);
    // FormData draws a new multipart boundary each time: the fingerprint is the file, not the framing.
    const again = await uploadForm(app.base, ws.key, { file: { bytes: png, name: 'renamed.png' }, headers });
    expectStatus(again, 200);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body.data.id).to.equal(first.body.data.id);
    expect(await rowsOf(ws.id)).to.equal('1');
    expect((await used(ws.id)).used_bytes).to.equal(String(png.length));
    const other = await uploadForm(app.base, ws.key, { file: { bytes: await pngOf(21, 10) }, headers });
    expectStatus(other, 409);
    expect(other.body.error).to.equal('conflict');
    const asVideo = await uploadForm(app.base, ws.key, { file: { bytes: png }, kind: 'video', headers });
    expectStatus(asVideo, 409);
    expect(await rowsOf(ws.id)).to.equal('1');
    // A refused upload frees its key: the same key then stores a good file.
    const refusedKey = { 'idempotency-key': 'upload-2' };
    expectStatus(
      await uploadForm(app.base, ws.key, { file: { bytes: Buffer.from('<svg/>') }, headers: refusedKey }),
      400,
    );
    expectStatus(await uploadForm(app.base, ws.key, { file: { bytes: png }, headers: refusedKey }), 201);
  });

  it('missing file → 400 at ["file"]; unknown kind → 400 at ["kind"]; nothing kept', async () => {
    const { ws } = await workspace();
    expectIssue(await uploadForm(app.base, ws.key, { kind: 'image' }), ['file'], 'required');
    expectIssue(await uploadForm(app.base, ws.key, { kind: 'pdf', file: { bytes: await pngOf(4, 4) } }), [
      'kind',
    ]);
    // A part of another name is not the file.
    expectIssue(await uploadForm(app.base, ws.key, { extra: { filee: 'x' } }), ['file']);
    await expectNothingKept(ws.id);
  });

  it('not JSON, not multipart → 415; a multipart body without boundary → 400', async () => {
    const { ws, req } = await workspace();
    const res = await req('POST', '/media', { file: 'x' });
    expect(res.status).to.equal(415);
    const bad = await fetch(`${app.base}/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'multipart/form-data' },
      body: 'garbage',
    });
    expect(bad.status).to.equal(400);
  });

  it('the bytes decide: kind mismatch names both; SVG, HTML, PDF, an executable, text and zero bytes → 400 at ["file"]', async () => {
    const { ws } = await workspace();
    const png = await pngOf(8, 8);
    const mismatch = await uploadForm(app.base, ws.key, {
      kind: 'video',
      file: { bytes: png, type: 'video/mp4', name: 'a.mp4' },
    });
    expectIssue(mismatch, ['file'], 'kind_mismatch');
    expect(mismatch.body.message).to.include('video').and.include('PNG');
    const audio = await uploadForm(app.base, ws.key, { kind: 'audio', file: { bytes: png } });
    expectIssue(audio, ['file'], 'kind_mismatch');
    // Every other pairing of a real file with a kind it is not (an MP4 as audio is accepted: audio-only MP4s exist).
    const mp4 = await avSample('mp4');
    const mp3 = await avSample('mp3');
    const wav = await avSample('wav');
    for (const [kind, bytes, label] of [
      ['image', mp4, 'MP4'],
      ['image', mp3, 'MP3'],
      ['video', mp3, 'MP3'],
      ['image', wav, 'WAV'],
      ['video', wav, 'WAV'],
    ] as const) {
      const res = await uploadForm(app.base, ws.key, { kind, file: { bytes, type: `${kind}/x` } });
      expectIssue(res, ['file'], 'kind_mismatch');
      expect(res.body.message).to.include(`"${kind}"`).and.include(label);
    }
    const refused: [string, Buffer][] = [
      [
        'svg',
        Buffer.from(
          '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
        ),
      ],
      ['html', Buffer.from('<!doctype html><html><script>alert(document.cookie)</script></html>')],
      ['pdf', Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF')],
      ['elf', Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(120)])],
      ['exe', Buffer.concat([Buffer.from('MZ'), Buffer.alloc(200)])],
      ['text', Buffer.from('just some text')],
      ['empty', Buffer.alloc(0)],
      // HTML first, a PNG after it: the sniffer reads the start, which is not an image.
      ['polyglot-html-png', Buffer.concat([Buffer.from('<html><script>alert(1)</script></html>'), png])],
    ];
    for (const [name, bytes] of refused) {
      const res = await uploadForm(app.base, ws.key, {
        file: { bytes, type: 'image/png', name: `${name}.png` },
      });
      expectIssue(res, ['file']);
    }
    await expectNothingKept(ws.id);
  });

  it('kind sent after the file: the bytes are checked against it once the form ends; a mismatch is a 400 naming both and keeps nothing', async () => {
    const { ws } = await workspace();
    const png = await pngOf(8, 8);
    const late = await uploadForm(app.base, ws.key, { kind: 'video', kindLast: true, file: { bytes: png } });
    expectIssue(late, ['file'], 'kind_mismatch');
    expect(late.body.message).to.include('video').and.include('PNG');
    const badKind = await uploadForm(app.base, ws.key, { kind: 'pdf', kindLast: true, file: { bytes: png } });
    expectIssue(badKind, ['kind']);
    await expectNothingKept(ws.id);
    const mp3 = await avSample('mp3');
    const ok = await uploadForm(app.base, ws.key, { kind: 'audio', kindLast: true, file: { bytes: mp3 } });
    expectStatus(ok, 201);
    expect(ok.body.data.kind).to.equal('audio');
    expect(ok.body.data.bytes).to.equal(mp3.length);
  });

  it('a refused type is refused from its first bytes: a 20 MB body that starts as SVG gets its 400 before it is all sent; nothing kept', async () => {
    const { ws } = await workspace();
    const total = 20 * 1024 * 1024;
    const svg = Buffer.from(
      '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'.padEnd(
        8192,
        ' ',
      ),
    );
    const res = await uploadChunked<{ error: string; issues: { path: string[] }[] }>(
      app.base,
      ws.key,
      total,
      svg,
    );
    expect(res.status).to.equal(400);
    expect(res.body.error).to.equal('invalid_request');
    expect(res.body.issues[0]!.path).to.deep.equal(['file']);
    // The sniffer reads the first 4,100 bytes; what was written by then is those plus what the sockets buffer.
    expect(res.sentAtAnswer, `${res.sentAtAnswer} bytes written when the 400 arrived`).to.be.below(total / 2);
    await expectNothingKept(ws.id);
  });

  it('one file and a few short fields: a second file (after a large first or a small one), a field over 1 KiB or a 9th field → 400; nothing kept', async () => {
    const { ws } = await workspace();
    const png = await pngOf(16, 16);
    const post = (form: FormData) =>
      fetch(`${app.base}/media`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ws.key}` },
        body: form,
      });
    for (const first of [Buffer.concat([png, randomBytes(6 * 1024 * 1024)]), png]) {
      const form = new FormData();
      form.append('kind', 'image');
      form.append('file', new Blob([first]), 'first.png');
      form.append('file', new Blob([randomBytes(12 * 1024 * 1024)]), 'second.png');
      const res = await post(form);
      expect(res.status).to.equal(400);
      const body = (await res.json()) as { error: string; issues: { path: string[] }[] };
      expect(body.error).to.equal('invalid_request');
      expect(body.issues[0]!.path).to.deep.equal(['file']);
    }
    const long = new FormData();
    long.append('note', 'x'.repeat(1025));
    long.append('file', new Blob([png]), 'a.png');
    const longRes = await post(long);
    expect(longRes.status).to.equal(400);
    expect(((await longRes.json()) as { issues: { path: string[] }[] }).issues[0]!.path).to.deep.equal([
      'note',
    ]);
    const many = new FormData();
    for (let i = 0; i < 9; i++) many.append(`f${i}`, 'v');
    many.append('file', new Blob([png]), 'a.png');
    expect((await post(many)).status).to.equal(400);
    await expectNothingKept(ws.id);
    // Within the limits, fields besides `kind` are ignored.
    const ok = await uploadForm(app.base, ws.key, {
      kind: 'image',
      extra: { alt: 'a triangle' },
      file: { bytes: png },
    });
    expectStatus(ok, 201);
  });

  it('a declared length: the file goes to the store as it arrives and is stored whole, kind before or after it', async () => {
    const { ws } = await workspace();
    const png = await pngOf(16, 16);
    for (const kindLast of [false, true]) {
      const bytes = Buffer.concat([png, randomBytes(11 * 1024 * 1024 + 333)]);
      const res = await uploadForm(app.base, ws.key, { kind: 'image', kindLast, file: { bytes } });
      expectStatus(res, 201);
      expect(res.body.data.bytes).to.equal(bytes.length);
      const got = Buffer.from(await (await fetch(res.body.data.previewUrl)).arrayBuffer());
      expect(got.equals(bytes)).to.equal(true);
    }
    expect(await pendingParts()).to.deep.equal([]);
  });

  it('a polyglot that starts as a GIF is stored as image/gif and served as image/gif, never as HTML', async () => {
    const { ws } = await workspace();
    const gif = await sharp1x1Gif();
    const poly = Buffer.concat([gif, Buffer.from('<html><script>alert(1)</script></html>')]);
    const res = await uploadForm(app.base, ws.key, {
      file: { bytes: poly, type: 'text/html', name: 'x.html' },
    });
    expectStatus(res, 201);
    const got = await fetch(res.body.data.previewUrl);
    expect(got.headers.get('content-type')).to.equal('image/gif');
  });

  it('over 25 MB by Content-Length → 413 at once; nothing kept', async () => {
    const { ws } = await workspace();
    const declared = await fetch(`${app.base}/media`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ws.key}`,
        'content-type': 'multipart/form-data; boundary=x',
        'content-length': String(MEDIA_MAX_BYTES + 1024 * 1024),
      },
      body: Buffer.alloc(MEDIA_MAX_BYTES + 1024 * 1024),
    });
    expect(declared.status).to.equal(413);
    expect(((await declared.json()) as { error: string }).error).to.equal('payload_too_large');
    await expectNothingKept(ws.id);
  });

  it('a 60 MB chunked body → 413 payload_too_large before the whole body is sent; RSS grows by less than 36 MB; nothing kept', async () => {
    const { ws } = await workspace();
    const total = 60 * 1024 * 1024;
    const head = await pngOf(16, 16);
    // The body is generated as it is written (one 64 KiB chunk reused): the test never holds it either.
    const { result: res, grewMb } = await rssGrowthDuring(() => uploadChunked(app.base, ws.key, total, head));
    expect(res.status).to.equal(413);
    expect(res.body.error).to.equal('payload_too_large');
    // The answer came once the count passed 25 MB, not after the body: the server stops reading there, so what the
    // client had written by then is the limit plus what the two sockets buffer (a few MB on loopback), far from 60.
    expect(res.sentAtAnswer, `${res.sentAtAnswer} bytes written when the 413 arrived`).to.be.above(
      MEDIA_MAX_BYTES,
    );
    expect(res.sentAtAnswer, `${res.sentAtAnswer} bytes written when the 413 arrived`).to.be.below(
      MEDIA_MAX_BYTES + 16 * 1024 * 1024,
    );
    expect(grewMb, `RSS grew ${grewMb.toFixed(1)} MB`).to.be.below(36);
    // The parts sent before the cut-off went with the aborted multipart upload.
    await expectNothingKept(ws.id);
  });

  it('memory: 4 concurrent ~25 MB uploads (100 MB sent) grow the API process RSS by two parts each (40 MiB) and change, not by the bytes sent', async () => {
    const { ws, req } = await workspace();
    const size = MEDIA_MAX_BYTES - 64 * 1024;
    const head = await pngOf(16, 16);
    const { result, grewMb } = await rssGrowthDuring(() =>
      Promise.all(
        Array.from({ length: 4 }, () => uploadChunked<{ data: MediaDto }>(app.base, ws.key, size, head)),
      ),
    );
    for (const r of result) expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect(result.map((r) => r.body.data.bytes)).to.deep.equal([size, size, size, size]);
    const sentMb = (4 * size) / 1024 / 1024;
    // What the design holds: per upload at most two parts (the one on the wire, the one being read), whatever the
    // body's size; plus room for the sockets, the loopback store in this process and chunks not yet collected.
    const designMb = (4 * 2 * STREAM_PART_SIZE) / 1024 / 1024;
    expect(
      grewMb,
      `RSS grew ${grewMb.toFixed(1)} MB while ${sentMb.toFixed(0)} MB were received (design: ${designMb} MB)`,
    ).to.be.below(designMb + 24);
    expect(Number((await used(ws.id)).used_bytes)).to.equal(4 * size);
    for (const r of result) expectStatus(await req('DELETE', `/media/${r.body.data.id}`), 204);
  });

  it('quota: the upload crossing the line → 403 plan_required naming Build; existing files stay; /me shows use and limit', async () => {
    const { ws, req } = await workspace('sandbox');
    const a = await uploadForm(app.base, ws.key, {
      file: { bytes: Buffer.concat([await pngOf(8, 8), Buffer.alloc(120_000)]) },
    });
    expectStatus(a, 201);
    const b = await uploadForm(app.base, ws.key, {
      file: { bytes: Buffer.concat([await pngOf(8, 8), Buffer.alloc(90_000)]) },
    });
    expectPlanRequired(b, 'Build');
    expect(b.body.requiredPlan).to.equal('build');
    expectStatus(await req('GET', `/media/${a.body.data.id}`), 200);
    const me = (await req('GET', '/me')).body as unknown as {
      storageBytes: number;
      storageLimitBytes: number;
    };
    expect(me.storageBytes).to.equal(a.body.data.bytes);
    expect(me.storageLimitBytes).to.equal(200_000);
    // Deleting frees the bytes: the same upload fits now.
    expectStatus(await req('DELETE', `/media/${a.body.data.id}`), 204);
    expect(((await req('GET', '/me')).body as unknown as { storageBytes: number }).storageBytes).to.equal(0);
    expectStatus(
      await uploadForm(app.base, ws.key, {
        file: { bytes: Buffer.concat([await pngOf(8, 8), Buffer.alloc(90_000)]) },
      }),
      201,
    );
  });

  it('quota race: 6 concurrent uploads at the edge never take the workspace past its line', async () => {
    const { ws } = await workspace('sandbox');
    const file = Buffer.concat([await pngOf(8, 8), Buffer.alloc(60_000)]);
    const results = await Promise.all(
      Array.from({ length: 6 }, () => uploadForm(app.base, ws.key, { file: { bytes: file } })),
    );
    const ok = results.filter((r) => r.status === 201).length;
    const refused = results.filter((r) => r.status === 403).length;
    expect(ok + refused).to.equal(6);
    expect(ok).to.be.within(1, 3);
    const u = await used(ws.id);
    expect(Number(u.used_bytes)).to.be.at.most(200_000);
    expect(Number(u.used_bytes)).to.equal(ok * file.length);
    expect(u.reserved_bytes).to.equal('0');
  });

  it('list (newest first, paged), get, delete (204, objects gone); another workspace’s id → 404', async () => {
    const { ws, req } = await workspace();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await uploadForm(app.base, ws.key, { file: { bytes: await pngOf(4 + i, 4) } })).body.data.id);
    const list = (await req<unknown>('GET', '/media?limit=2')) as unknown as {
      status: number;
      body: { data: { id: string }[]; pagination: { total: number; hasMore: boolean } };
    };
    expect(list.status).to.equal(200);
    expect(list.body.data.map((m) => m.id)).to.deep.equal([ids[2], ids[1]]);
    expect(list.body.pagination).to.include({ total: 3, hasMore: true });
    const other = await workspace();
    expectNotFound(await other.req('GET', `/media/${ids[0]}`));
    expectNotFound(await other.req('DELETE', `/media/${ids[0]}`));
    expect((await other.req<unknown[]>('GET', '/media')).body.data).to.deep.equal([]);
    const read = await api(app.base, ws.readKey)('DELETE', `/media/${ids[0]}`);
    expect(read.status).to.equal(403);
    expectStatus(await req('DELETE', `/media/${ids[0]}`), 204);
    expectNotFound(await req('GET', `/media/${ids[0]}`));
    expectNotFound(await req('DELETE', `/media/${ids[0]}`));
    expect((await objectsOf(ws.id)).some((k) => k.includes(ids[0]!))).to.equal(false);
  });

  describe('never stuck in processing: the sweeper failing a media.process job fails the media row too', () => {
    // No media worker runs in this file: every job stays queued until the test moves it past its limits.
    const jobOf = async (mediaId: string) =>
      (
        await boundQuery<{ id: string; status: string }>(
          em(),
          `select id, status from jobs where kind = 'media.process' and input ->> 'mediaId' = ?`,
          [mediaId],
        )
      )[0]!;
    const uploadOne = async () => {
      const { ws, req } = await workspace();
      const png = await pngOf(12, 12);
      const res = await uploadForm(app.base, ws.key, { file: { bytes: png } });
      expectStatus(res, 201);
      expect(res.body.data.status).to.equal('processing');
      return { req, png, media: res.body.data, job: await jobOf(res.body.data.id) };
    };
    const getMediaOf = async (req: ReturnType<typeof api>, id: string) =>
      (await req<MediaDto>('GET', `/media/${id}`)).body.data;

    it('past its deadline (its worker died or hung) → job failed as timeout, media failed with the reason, file still served', async () => {
      const { req, png, media, job } = await uploadOne();
      await boundQuery(em(), `update jobs set deadline_at = now() - interval '1 second' where id = ?`, [
        job.id,
      ]);
      const out = await sweepJobs(app.rt, { republishAfterMs: 3_600_000 });
      expect(out.failed).to.include(job.id);
      expect((await jobOf(media.id)).status).to.equal('failed');
      const m = await getMediaOf(req, media.id);
      expect(m.status).to.equal('failed');
      expect(m.error).to.match(/^Processing did not finish: The job did not finish within its deadline/);
      const listed = (await req<MediaDto[]>('GET', '/media')).body.data;
      expect(listed.find((x) => x.id === media.id)?.status).to.equal('failed');
      const got = await fetch(m.previewUrl);
      expect(got.status).to.equal(200);
      expect(Buffer.from(await got.arrayBuffer()).equals(png)).to.equal(true);
    });

    it('out of deliveries (its last worker died) → media failed naming the attempts', async () => {
      const { req, media, job } = await uploadOne();
      await boundQuery(em(), `update jobs set attempts = max_attempts where id = ?`, [job.id]);
      expect((await sweepJobs(app.rt, { republishAfterMs: 3_600_000 })).failed).to.include(job.id);
      const m = await getMediaOf(req, media.id);
      expect(m.status).to.equal('failed');
      expect(m.error).to.match(/^Processing did not finish: The job failed after \d+ attempts/);
    });

    it('a media row the worker already settled keeps its result when its job is failed afterwards', async () => {
      const { req, media, job } = await uploadOne();
      await boundQuery(em(), `update media set status = 'ready', width = 12, height = 12 where id = ?`, [
        media.id,
      ]);
      await boundQuery(em(), `update jobs set deadline_at = now() - interval '1 second' where id = ?`, [
        job.id,
      ]);
      expect((await sweepJobs(app.rt, { republishAfterMs: 3_600_000 })).failed).to.include(job.id);
      const m = await getMediaOf(req, media.id);
      expect([m.status, m.error, m.width]).to.deep.equal(['ready', null, 12]);
    });
  });
});

async function sharp1x1Gif(): Promise<Buffer> {
  return Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
}
