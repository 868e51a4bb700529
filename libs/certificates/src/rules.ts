/**
 * Who may have a certificate (SPEC.md "Issued certificate" state table, Errors "403 on a
 * certificate download"). Pure functions: the player's download route and any future
 * entry point ask the same question and get the same words.
 */

/** The facts of one run a certificate depends on. */
export interface RunVerdict {
  status: 'in_progress' | 'completed';
  /**
   * The pass verdict to honour: the one fixed at completion (`passedAtCompletion`),
   * falling back to the current one for runs recorded before it was kept; null when the
   * course has no pass mark (any completion counts).
   */
  passed: boolean | null;
  /** null for an anonymous run (an embed opened without an identity). */
  identityId: string | null;
  /** The pass mark the verdict was judged against, for the message. */
  passingScore?: number | null;
  score?: number | null;
}

export type CertificateRefusalReason = 'not_finished' | 'not_passed' | 'anonymous';

export interface CertificateRefusal {
  reason: CertificateRefusalReason;
  message: string;
}

/**
 * null when the run earns a certificate; otherwise why not (every refusal is a 403).
 * Order matters: an unfinished run is "not finished" even when it is also anonymous, so
 * the learner is told the thing they can do something about first.
 */
export function certificateRefusal(run: RunVerdict): CertificateRefusal | null {
  if (run.status !== 'completed') {
    return {
      reason: 'not_finished',
      message: 'The course is not finished yet; the certificate is available once the last screen is reached',
    };
  }
  if (run.passed === false) {
    const mark = run.passingScore ?? null;
    const score = run.score ?? null;
    return {
      reason: 'not_passed',
      message:
        mark !== null && score !== null
          ? `The certificate needs a score of at least ${mark}%; this run scored ${score}%`
          : 'This run did not meet the pass mark of the course, so it earns no certificate',
    };
  }
  if (run.identityId === null) {
    return {
      reason: 'anonymous',
      message:
        'This run is anonymous, so there is no name to print on a certificate; open the course with a signed learner identity to earn one',
    };
  }
  return null;
}
