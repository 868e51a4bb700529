import type { Context } from 'koa';
import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import { ASSERTED_IDENTITY_NOTE, CertificateVerification, ErrorBody } from '@lectern/contracts';
import { findBySerial, verificationOf, verifyLookupWait } from '@lectern/certificates';
import { z } from 'zod';
import { NO_FRAME_ANCESTOR, cspHash, setPageHeaders } from '../http/page-security.js';

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The page's one inline style element, allowed by its hash in the page's policy (page-security.ts). */
const VERIFY_STYLE = `
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1f24;background:#f4f5f7}
main{max-width:560px;margin:48px auto;padding:0 16px}
.card{background:#fff;border:1px solid #e3e6ea;border-radius:12px;padding:28px 32px}
.status{display:flex;align-items:center;gap:10px;font-weight:700;font-size:20px;margin:0 0 18px}
.ok{color:#1a7f37}.bad{color:#cf222e}
.mark{display:inline-flex;width:30px;height:30px;border-radius:50%;align-items:center;justify-content:center;color:#fff;font-size:18px}
.ok .mark{background:#1a7f37}.bad .mark{background:#cf222e}
dl{display:grid;grid-template-columns:max-content 1fr;gap:8px 18px;margin:0}
dt{color:#57606a}dd{margin:0;font-weight:600}
.serial{font-family:ui-monospace,monospace;letter-spacing:.04em}
footer{color:#57606a;font-size:13px;margin-top:14px}
.note{color:#9a6700;margin:16px 0 0}
`;

const VERIFY_STYLE_HASHES = [cspHash(VERIFY_STYLE)];

function page(title: string, body: string, opts: { lang?: string; dir?: 'ltr' | 'rtl' } = {}): string {
  return `<!doctype html>
<html lang="${esc(opts.lang ?? 'en')}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${esc(title)}</title>
<style>${VERIFY_STYLE}</style></head><body><main>${body}</main></body></html>`;
}

/** The served value for the address: `Accept: application/json` (or `?format=json`) gets JSON, everyone else the page. */
function wantsJson(ctx: Context): boolean {
  if (ctx.query.format === 'json') return true;
  return ctx.accepts('html', 'json') === 'json';
}

/**
 * GET /verify/:serial — SPEC.md Authentication 7: no key, no account. A person gets a
 * page they can trust at a glance; a program sends `Accept: application/json` and gets
 * the same facts. Any spelling of the serial (case, dashes) finds the certificate. Each
 * client address may look up VERIFY_LOOKUPS_PER_MINUTE serials a minute (429 with
 * Retry-After past it), so serials cannot be enumerated cheaply.
 */
export function verifyRoutes(pub: ApiRouter, deps: Pick<RouteDeps, 'orm' | 'cfg' | 'log'>) {
  pub.route(
    {
      method: 'get',
      path: '/verify/:serial',
      operationId: 'verifyCertificate',
      summary: 'Public certificate verification (HTML, or JSON with Accept: application/json)',
      description:
        'No key needed. Case and dashes in the serial are ignored. The score is shown only when the certificate design prints it. ' +
        '`learnerIdentity` is `asserted` (and the page says so) when an LMS asserted the learner (a `track=1` SCORM run). ' +
        'Lookups are limited per client address (429 with Retry-After).',
      tags: ['Verification'],
      auth: 'public',
      responses: {
        200: { description: 'A valid certificate', schema: z.object({ data: CertificateVerification }) },
        404: {
          description: 'not_found: no certificate has this serial (an HTML page for browsers)',
          schema: ErrorBody,
        },
        429: {
          description: 'rate_limited: too many lookups from this address (Retry-After)',
          schema: ErrorBody,
        },
      },
    },
    async (ctx) => {
      const json = wantsJson(ctx);
      ctx.set('Cache-Control', 'no-store');
      // Never framed (a page people trust at a glance must not be dressed up by another site), and the serial in
      // its URL is not passed on.
      setPageHeaders(ctx, {
        frameAncestors: NO_FRAME_ANCESTOR,
        styleHashes: VERIFY_STYLE_HASHES,
        referrerPolicy: 'no-referrer',
      });
      ctx.vary('Accept');
      const em = deps.orm.em.fork();
      const wait = await verifyLookupWait(em, ctx.ip, deps.cfg.VERIFY_LOOKUPS_PER_MINUTE);
      if (wait > 0) {
        ctx.status = 429;
        ctx.set('Retry-After', String(wait));
        const message = `Too many certificate lookups from this address; try again in ${wait} s`;
        if (json) ctx.body = { error: 'rate_limited', message };
        else {
          ctx.type = 'html';
          ctx.body = page(
            'Too many lookups',
            `<div class="card"><p class="status bad">Too many lookups</p><p>${esc(message)}.</p></div>`,
          );
        }
        return;
      }
      const row = await findBySerial(em, null, ctx.params.serial);
      if (!row) {
        ctx.status = 404;
        const message =
          'No certificate has this serial. Check it against the certificate: letters and digits only, no 0, O, 1, I or L.';
        if (json) ctx.body = { error: 'not_found', message };
        else {
          ctx.type = 'html';
          ctx.body = page(
            'Certificate not found',
            `<div class="card"><p class="status bad"><span class="mark">✕</span>Not a valid certificate</p>` +
              `<p>No certificate with the serial <span class="serial">${esc(ctx.params.serial.slice(0, 64))}</span> was issued.</p>` +
              `<p>${esc(message)}</p></div>`,
          );
        }
        return;
      }
      const v = verificationOf(row);
      if (json) {
        ctx.body = { data: v };
        return;
      }
      const date = (() => {
        try {
          return new Intl.DateTimeFormat(v.locale, { dateStyle: 'long', timeZone: 'UTC' }).format(
            new Date(v.issuedAt),
          );
        } catch {
          return v.issuedAt.slice(0, 10);
        }
      })();
      const rows: [string, string, string?][] = [
        ['Awarded to', v.learnerName, row.direction],
        // Said where the name is read: nobody vouched for the name of a learner an LMS asserted.
        ...(v.learnerIdentity === 'asserted'
          ? ([['Learner identity', 'Asserted by an LMS, not verified']] as [string, string][])
          : []),
        ['Course', v.courseTitle, row.direction],
        ['Issued by', v.issuerName],
        ['Issued on', date],
        ...(v.score !== null ? ([['Score', `${v.score}%`]] as [string, string][]) : []),
        ['Serial', v.serial],
      ];
      ctx.type = 'html';
      ctx.body = page(
        `Valid certificate ${v.serial}`,
        `<div class="card"><p class="status ok"><span class="mark">✓</span>Valid certificate</p><dl>` +
          rows
            .map(
              ([k, val, dir]) =>
                `<dt>${esc(k)}</dt><dd${k === 'Serial' ? ' class="serial"' : ''}${dir ? ` dir="${dir}" lang="${esc(v.locale)}"` : ''}>${esc(val)}</dd>`,
            )
            .join('') +
          `</dl>${v.learnerIdentity === 'asserted' ? `<p class="note">${esc(ASSERTED_IDENTITY_NOTE)}</p>` : ''}</div><footer>This page is served by the issuer's certificate service and reflects its records at the time you opened it.</footer>`,
      );
    },
  );
}
