/**
 * Certificates (SPEC.md "Issued certificate", docs/certificates.md): serials, who may
 * have one, issuing on first download, the rendered PDF, records and verification.
 */
export { SERIAL_PREFIX, SERIAL_ALPHABET, generateSerial, normaliseSerial, isSerial } from './serial.js';
export {
  certificateRefusal,
  type RunVerdict,
  type CertificateRefusal,
  type CertificateRefusalReason,
} from './rules.js';
export { verifyUrl, pdfKeyOf } from './paths.js';
export {
  CERTIFICATE_WORDING,
  certificateWording,
  localizedDesign,
  type CertificateWording,
} from './wording.js';
export {
  issueCertificate,
  issueCertificateRecord,
  certificatePdf,
  reportedScore,
  isWholePdf,
  type CertificateSubject,
  type IssuedCertificateRow,
  type IssueDeps,
  type CertificatePdfDeps,
  type IssueOutcome,
} from './issue.js';
export {
  issuedCertificateDto,
  listIssuedCertificates,
  findBySerial,
  getIssuedCertificate,
  verificationOf,
  verifyLookupWait,
  type IssuedCertificateFilter,
} from './records.js';
export {
  startCertificateWorker,
  certificateRenderJob,
  certificateRenderHandler,
  certificateRenderSettings,
  CERTIFICATE_RENDER_KIND,
  CERTIFICATE_WORKER_APP,
  CERTIFICATE_WORKER_ENV,
  type CertificateWorkerConfig,
  type CertificateRenderSettings,
  type CertificateRenderDeps,
  type CertificateWorkerOptions,
} from './worker.js';
export { fetchLogo, imageKind, type LogoFetch, type LogoFetchOptions } from './render/logo.js';
export {
  loadFontLibrary,
  lazyFontLibrary,
  missingFonts,
  assertFacesFor,
  cjkRegionOf,
  DEFAULT_FONT_DIR,
  FONT_FILES,
  FONT_PACKAGES,
  type FontLibrary,
  type FontScript,
  type MissingFonts,
  type ChainFont,
} from './render/fonts.js';
export { setText, type SetText } from './render/text.js';
export {
  renderCertificate,
  parseColour,
  PAGE_SIZES,
  CONTENT_MARGIN,
  type RenderOptions,
  type RenderedCertificate,
} from './render/render.js';
export {
  openBadgeCredential,
  signCredential,
  envelopedCredential,
  issuerProfile,
  issuerWorkspace,
  issuerUrl,
  verificationMethodId,
  credentialKeys,
  lazyCredentialKeys,
  VC_CONTEXT,
  OB_CONTEXT,
  VC_JWT_MEDIA_TYPE,
  type CredentialKeys,
  type PublishedKey,
} from './credential.js';
