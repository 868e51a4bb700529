import type { ScormVersion } from '@lectern/contracts';
import { GENERATOR_SCHEMA } from '../package-layout.js';

/**
 * `imsmanifest.xml` of a single-SCO package (docs/scorm.md "Package layout"), valid against the ADL schemas
 * (SCORM 2004 4th edition; SCORM 1.2 with IMS MD 1.2.1), checked with xmllint in the tests.
 *
 * Written from a template: the structure is fixed and only the title, the language, the identifiers and the
 * file list vary, so escaping those few values (and dropping the characters XML 1.0 cannot carry) is all it
 * takes; a builder library would add a dependency for no gain here.
 *
 * Our marker is LOM's "metadata schema" (1.2: `metametadata/metadatascheme`, 2004: `metaMetadata/
 * metadataSchema`), the element meant to name what wrote the record: it holds `GENERATOR_SCHEMA`.
 */
export interface ManifestInput {
  version: ScormVersion;
  /** The course id; identifiers are derived from it. */
  courseId: string;
  title: string;
  /** The exported locale (the course's own or a translation's). */
  lang: string;
  /** Every file of the package but the manifest, `/`-separated, relative to the root. */
  files: string[];
}

/** Characters XML 1.0 does not allow at all (C0 controls but tab/LF/CR, lone surrogates, U+FFFE/FFFF). */
const NOT_XML =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text or attribute value: the five markup characters escaped, characters XML cannot hold removed. */
export function xmlEscape(s: string): string {
  return s
    .replace(NOT_XML, '')
    .replace(
      /[&<>"']/g,
      (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c,
    )
    .replace(/\r/g, '&#13;');
}

/** An `xsd:ID` (an NCName) from any string: the manifest's identifiers must be one. */
export function ncName(s: string): string {
  const body = s.replace(/[^A-Za-z0-9._-]/g, '_');
  return /^[A-Za-z_]/.test(body) ? body : `_${body}`;
}

/** `xml:lang` is `xsd:language`; a locale that does not fit it is left out rather than making the file invalid. */
const XSD_LANGUAGE = /^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$/;
export const xmlLang = (lang: string): string | null => (XSD_LANGUAGE.test(lang) ? lang : null);

const SCHEMA_LOCATIONS = {
  scorm2004:
    'http://www.imsglobal.org/xsd/imscp_v1p1 imscp_v1p1.xsd ' +
    'http://www.adlnet.org/xsd/adlcp_v1p3 adlcp_v1p3.xsd ' +
    'http://www.adlnet.org/xsd/adlseq_v1p3 adlseq_v1p3.xsd ' +
    'http://www.adlnet.org/xsd/adlnav_v1p3 adlnav_v1p3.xsd ' +
    'http://www.imsglobal.org/xsd/imsss imsss_v1p0.xsd ' +
    'http://ltsc.ieee.org/xsd/LOM lom.xsd',
  scorm12:
    'http://www.imsproject.org/xsd/imscp_rootv1p1p2 imscp_rootv1p1p2.xsd ' +
    'http://www.imsglobal.org/xsd/imsmd_rootv1p2p1 imsmd_rootv1p2p1.xsd ' +
    'http://www.adlnet.org/xsd/adlcp_rootv1p2 adlcp_rootv1p2.xsd',
} as const;

export function buildManifest(input: ManifestInput): string {
  const id = ncName(`lectern-${input.courseId}`);
  const title = xmlEscape(input.title);
  const lang = xmlLang(input.lang);
  const langAttr = lang ? ` xml:lang="${xmlEscape(lang)}"` : '';
  const files = input.files.map((f) => `        <file href="${xmlEscape(f)}"/>`).join('\n');
  if (input.version === 'scorm12') {
    return `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="${id}" version="1.0"
  xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2"
  xmlns:imsmd="http://www.imsglobal.org/xsd/imsmd_rootv1p2p1"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="${SCHEMA_LOCATIONS.scorm12}">
  <metadata>
    <schema>ADL SCORM</schema>
    <schemaversion>1.2</schemaversion>
    <imsmd:lom>
      <imsmd:general>
        <imsmd:title>
          <imsmd:langstring${langAttr}>${title}</imsmd:langstring>
        </imsmd:title>${lang ? `\n        <imsmd:language>${xmlEscape(lang)}</imsmd:language>` : ''}
      </imsmd:general>
      <imsmd:metametadata>
        <imsmd:metadatascheme>${xmlEscape(GENERATOR_SCHEMA)}</imsmd:metadatascheme>${lang ? `\n        <imsmd:language>${xmlEscape(lang)}</imsmd:language>` : ''}
      </imsmd:metametadata>
    </imsmd:lom>
  </metadata>
  <organizations default="${id}-org">
    <organization identifier="${id}-org">
      <title>${title}</title>
      <item identifier="${id}-item" identifierref="${id}-sco" isvisible="true">
        <title>${title}</title>
      </item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="${id}-sco" type="webcontent" adlcp:scormtype="sco" href="index.html">
${files}
    </resource>
  </resources>
</manifest>
`;
  }
  const lomLang = lang ? ` language="${xmlEscape(lang)}"` : '';
  return `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="${id}" version="1.0"
  xmlns="http://www.imsglobal.org/xsd/imscp_v1p1"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_v1p3"
  xmlns:adlseq="http://www.adlnet.org/xsd/adlseq_v1p3"
  xmlns:adlnav="http://www.adlnet.org/xsd/adlnav_v1p3"
  xmlns:imsss="http://www.imsglobal.org/xsd/imsss"
  xmlns:lom="http://ltsc.ieee.org/xsd/LOM"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="${SCHEMA_LOCATIONS.scorm2004}">
  <metadata>
    <schema>ADL SCORM</schema>
    <schemaversion>2004 4th Edition</schemaversion>
    <lom:lom>
      <lom:general>
        <lom:title>
          <lom:string${lomLang}>${title}</lom:string>
        </lom:title>${lang ? `\n        <lom:language>${xmlEscape(lang)}</lom:language>` : ''}
      </lom:general>
      <lom:metaMetadata>
        <lom:metadataSchema>${xmlEscape(GENERATOR_SCHEMA)}</lom:metadataSchema>${lang ? `\n        <lom:language>${xmlEscape(lang)}</lom:language>` : ''}
      </lom:metaMetadata>
    </lom:lom>
  </metadata>
  <organizations default="${id}-org">
    <organization identifier="${id}-org">
      <title>${title}</title>
      <item identifier="${id}-item" identifierref="${id}-sco">
        <title>${title}</title>
      </item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="${id}-sco" type="webcontent" adlcp:scormType="sco" href="index.html">
${files}
    </resource>
  </resources>
</manifest>
`;
}
