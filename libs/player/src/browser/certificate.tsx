/**
 * "Download your certificate" (docs/player.md "Certificate"): shown at the end of the course and in a results
 * block once the run is finished and passed (or the course has no pass mark), for a named learner on a tracked
 * run. The PDF is fetched with the run token (the first download issues it, the worker renders it: a moment),
 * with progress meanwhile, then saved; the verify link of the certificate appears beside the button.
 */
import { useState } from 'preact/hooks';
import { certificateStrings } from '../core/certificate.js';
import { PlayerApiError } from '../core/client.js';
import type { RunResult } from '../core/types.js';
import type { Session } from './session.js';

type Phase =
  | { kind: 'idle' }
  | { kind: 'working' }
  | { kind: 'done'; verifyUrl: string | null }
  | { kind: 'failed'; message: string };

/** Hands the browser a file to save, as a link with `download` would. */
function save(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.rel = 'noopener';
  a.hidden = true;
  document.body.appendChild(a);
  a.click();
  a.remove();
  // The save has started from the URL by now; a minute is ample for a slow disk dialog.
  window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Only an http(s) address is offered as a link (the header is the server's, but a link is a link). */
function safeLink(url: string | null): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : null;
  } catch {
    return null;
  }
}

export function CertificateDownload({
  session,
  result,
  lang,
}: {
  session: Session;
  result: RunResult | null;
  lang: string | null | undefined;
}) {
  const [phase, setPhase] = useState<Phase>({ kind: 'idle' });
  const run = session.certificateRun();
  // A certificate once issued stays the learner's: offered after a later failed pass too.
  const issued = run?.issued() ?? null;
  if (run === null || result === null || (result.passed === false && issued === null)) return null;
  const s = certificateStrings(lang);

  const download = async () => {
    setPhase({ kind: 'working' });
    try {
      await run.settle();
      let file;
      try {
        file = await run.client.certificate(run.completionId, run.token());
      } catch (err) {
        if (!(err instanceof PlayerApiError) || err.status !== 401) throw err;
        await run.renew();
        file = await run.client.certificate(run.completionId, run.token());
      }
      save(file.blob, file.fileName);
      if (file.serial && file.verifyUrl) run.remember({ serial: file.serial, verifyUrl: file.verifyUrl });
      setPhase({ kind: 'done', verifyUrl: safeLink(file.verifyUrl) });
    } catch (err) {
      console.warn('lectern player: certificate download failed', err);
      // The server's refusals say what the learner can do (e.g. no name on record); a network error says nothing.
      const detail =
        err instanceof PlayerApiError && err.status >= 400 && err.status < 500 ? err.message : '';
      setPhase({ kind: 'failed', message: detail });
    }
  };

  const working = phase.kind === 'working';
  // Beside the button as soon as the certificate is known: from this download, else from the run's open.
  const verifyLink = phase.kind === 'done' ? phase.verifyUrl : safeLink(issued?.verifyUrl ?? null);
  return (
    <div class="lp-certificate" data-certificate={phase.kind}>
      <div class="lp-certificate-actions">
        <button
          type="button"
          class="lp-btn lp-btn-primary lp-certificate-download"
          onClick={() => void download()}
          disabled={working}
          aria-busy={working ? 'true' : undefined}
        >
          {s.download}
        </button>
        {verifyLink && (
          <a class="lp-certificate-verify" href={verifyLink} target="_blank" rel="noopener noreferrer">
            {s.verify}
          </a>
        )}
      </div>
      <div class="lp-certificate-status" role="status" aria-live="polite">
        {working && (
          <p>
            <progress class="lp-certificate-progress" aria-label={s.preparing} /> {s.preparing}
          </p>
        )}
        {phase.kind === 'done' && <p>{s.ready}</p>}
        {phase.kind === 'failed' && (
          <p class="lp-bad">
            {s.failed}
            {phase.message && ` ${phase.message}`}
          </p>
        )}
      </div>
    </div>
  );
}
