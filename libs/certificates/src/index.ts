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
export {
  loadFontLibrary,
  cjkRegionOf,
  DEFAULT_FONT_DIR,
  FONT_FILES,
  type FontLibrary,
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
