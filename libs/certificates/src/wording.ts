/**
 * The certificate's own words in the language the learner studied in (docs/certificates.md "Language"): the
 * built-in eyebrow and body text, and the note on an LMS-asserted learner. The date and the score are
 * formatted by Intl in the same locale (render/format.ts). Every language of the player's interface is here
 * (test/unit/certificate-wording.test.ts holds the two lists together), plus the others the score label knows.
 */
import {
  ASSERTED_IDENTITY_NOTE,
  CERTIFICATE_DEFAULTS,
  CERTIFICATE_TEXT_LIMITS,
  CERTIFICATE_TRANSLATABLE_TOKENS,
  type CertificateTokens,
  type CertificateTranslatableToken,
} from '@lectern/contracts';

export interface CertificateWording {
  /** Printed above the learner's name when the template sets no `eyebrow`. */
  eyebrow: string;
  /** Printed between the name and the course title when the template sets no `bodyText`. */
  bodyText: string;
  /** Above the footer of a certificate whose learner an LMS asserted. */
  assertedNote: string;
}

const en: CertificateWording = {
  eyebrow: CERTIFICATE_DEFAULTS.eyebrow,
  bodyText: CERTIFICATE_DEFAULTS.bodyText,
  assertedNote: ASSERTED_IDENTITY_NOTE,
};

export const CERTIFICATE_WORDING: Readonly<Record<string, CertificateWording>> = {
  en,
  es: {
    eyebrow: 'Certificado de finalización',
    bodyText: 'ha completado con éxito',
    assertedNote: 'La identidad del alumno la declaró un LMS; no se ha verificado.',
  },
  fr: {
    eyebrow: 'Certificat de réussite',
    bodyText: 'a suivi avec succès la formation',
    assertedNote: "L'identité de l'apprenant a été déclarée par un LMS, sans vérification.",
  },
  de: {
    eyebrow: 'Teilnahmezertifikat',
    bodyText: 'hat erfolgreich abgeschlossen',
    assertedNote: 'Die Identität der lernenden Person wurde von einem LMS angegeben, nicht geprüft.',
  },
  pt: {
    eyebrow: 'Certificado de conclusão',
    bodyText: 'concluiu com êxito',
    assertedNote: 'A identidade do formando foi declarada por um LMS, não verificada.',
  },
  it: {
    eyebrow: 'Attestato di completamento',
    bodyText: 'ha completato con successo',
    assertedNote: "L'identità del discente è stata dichiarata da un LMS, non verificata.",
  },
  nl: {
    eyebrow: 'Certificaat van voltooiing',
    bodyText: 'heeft met succes afgerond',
    assertedNote: 'De identiteit van de cursist is door een LMS opgegeven, niet geverifieerd.',
  },
  pl: {
    eyebrow: 'Certyfikat ukończenia',
    bodyText: 'z powodzeniem ukończył(a) kurs',
    assertedNote: 'Tożsamość uczestnika podał system LMS; nie została zweryfikowana.',
  },
  ru: {
    eyebrow: 'Сертификат о прохождении',
    bodyText: 'успешно завершил(а) курс',
    assertedNote: 'Личность слушателя указана системой LMS и не проверялась.',
  },
  uk: {
    eyebrow: 'Сертифікат про проходження',
    bodyText: 'успішно завершив(ла) курс',
    assertedNote: 'Особу слухача вказала система LMS; її не перевірено.',
  },
  el: {
    eyebrow: 'Πιστοποιητικό ολοκλήρωσης',
    bodyText: 'ολοκλήρωσε με επιτυχία',
    assertedNote: 'Η ταυτότητα του εκπαιδευόμενου δηλώθηκε από ένα LMS και δεν επαληθεύτηκε.',
  },
  tr: {
    eyebrow: 'Tamamlama sertifikası',
    bodyText: 'başarıyla tamamladı',
    assertedNote: 'Katılımcının kimliği bir LMS tarafından bildirildi, doğrulanmadı.',
  },
  ar: {
    eyebrow: 'شهادة إتمام',
    bodyText: 'أتمّ بنجاح',
    assertedNote: 'هوية المتعلّم صرّح بها نظام إدارة التعلّم ولم يُتحقَّق منها.',
  },
  he: {
    eyebrow: 'תעודת סיום',
    bodyText: 'השלים/ה בהצלחה',
    assertedNote: 'זהות הלומד/ת נמסרה על ידי מערכת LMS ולא אומתה.',
  },
  ja: {
    eyebrow: '修了証',
    bodyText: '以下のコースを修了しました',
    assertedNote: '受講者の本人確認は LMS の申告によるもので、検証されていません。',
  },
  zh: {
    eyebrow: '结业证书',
    bodyText: '已成功完成',
    assertedNote: '学员身份由 LMS 声明，未经验证。',
  },
  ko: {
    eyebrow: '수료증',
    bodyText: '다음 과정을 성공적으로 수료했습니다',
    assertedNote: '학습자의 신원은 LMS가 제공한 것으로, 확인되지 않았습니다.',
  },
};

/** The wording of a locale tag by its language (`fr-CA` → `fr`); English for a language not listed. */
export function certificateWording(locale: string): CertificateWording {
  const language = locale.toLowerCase().split(/[-_]/)[0];
  return Object.hasOwn(CERTIFICATE_WORDING, language) ? CERTIFICATE_WORDING[language] : en;
}

/** At most `max` UTF-16 units (zod's measure), never half a surrogate pair. */
function cut(text: string, max: number): string {
  const head = text.slice(0, max);
  return /[\uD800-\uDBFF]$/.test(head) ? head.slice(0, -1) : head;
}

/**
 * The design snapshot an issued certificate keeps, in the run's language:
 * - a template text the course translation translates (`texts`, from `certificate.<token>` paths) replaces the
 *   template's own — only where the template has a text of its own, as a translation of a course field that no
 *   longer exists keeps the source;
 * - an eyebrow or body text the template leaves to the built-in design takes the built-in wording of the locale.
 * An English run of a template without translations keeps its tokens as they are, so its snapshot (and page) is
 * what it always was.
 */
export function localizedDesign(
  tokens: CertificateTokens,
  locale: string,
  texts: Partial<Record<CertificateTranslatableToken, string>>,
): CertificateTokens {
  const design: CertificateTokens = { ...tokens };
  for (const token of CERTIFICATE_TRANSLATABLE_TOKENS) {
    const own = tokens[token];
    const translated = texts[token];
    // Cut to the token's limit: the render job checks its input against the template's schema.
    if (own?.trim() && translated?.trim()) design[token] = cut(translated, CERTIFICATE_TEXT_LIMITS[token]);
  }
  const wording = certificateWording(locale);
  if (wording !== en) {
    if (design.eyebrow === undefined) design.eyebrow = wording.eyebrow;
    if (design.bodyText === undefined) design.bodyText = wording.bodyText;
  }
  return design;
}
