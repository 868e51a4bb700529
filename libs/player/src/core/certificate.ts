/**
 * The certificate download of the player (docs/player.md "Certificate"): its words in every language of the
 * chrome, and reading the Player API's answer (`GET /player/v1/runs/:id/certificate`) into a file to save. Kept
 * apart from the chrome's own table so the end-of-course screen and the results block share one piece.
 */
import { chromeLanguage } from './i18n.js';

export const CERTIFICATE_KEYS = ['download', 'preparing', 'ready', 'verify', 'failed'] as const;
export type CertificateStrings = Record<(typeof CERTIFICATE_KEYS)[number], string>;

export const CERTIFICATE_STRINGS: Record<string, CertificateStrings> = {
  en: {
    download: 'Download your certificate',
    preparing: 'Preparing your certificate…',
    ready: 'Your certificate is downloading.',
    verify: 'Verify this certificate',
    failed: 'The certificate could not be downloaded.',
  },
  es: {
    download: 'Descarga tu certificado',
    preparing: 'Preparando tu certificado…',
    ready: 'Tu certificado se está descargando.',
    verify: 'Verificar este certificado',
    failed: 'No se pudo descargar el certificado.',
  },
  fr: {
    download: 'Télécharger votre certificat',
    preparing: 'Préparation de votre certificat…',
    ready: 'Votre certificat est en cours de téléchargement.',
    verify: 'Vérifier ce certificat',
    failed: "Le certificat n'a pas pu être téléchargé.",
  },
  de: {
    download: 'Zertifikat herunterladen',
    preparing: 'Ihr Zertifikat wird erstellt …',
    ready: 'Ihr Zertifikat wird heruntergeladen.',
    verify: 'Dieses Zertifikat prüfen',
    failed: 'Das Zertifikat konnte nicht heruntergeladen werden.',
  },
  pt: {
    download: 'Transferir o seu certificado',
    preparing: 'A preparar o seu certificado…',
    ready: 'O seu certificado está a ser transferido.',
    verify: 'Verificar este certificado',
    failed: 'Não foi possível transferir o certificado.',
  },
  ar: {
    download: 'نزّل شهادتك',
    preparing: 'جارٍ تجهيز شهادتك…',
    ready: 'يجري تنزيل شهادتك.',
    verify: 'تحقّق من هذه الشهادة',
    failed: 'تعذّر تنزيل الشهادة.',
  },
  he: {
    download: 'הורדת התעודה שלך',
    preparing: 'התעודה שלך בהכנה…',
    ready: 'התעודה שלך יורדת כעת.',
    verify: 'אימות התעודה',
    failed: 'לא ניתן היה להוריד את התעודה.',
  },
  ja: {
    download: '修了証をダウンロード',
    preparing: '修了証を準備しています…',
    ready: '修了証をダウンロードしています。',
    verify: 'この修了証を確認',
    failed: '修了証をダウンロードできませんでした。',
  },
  zh: {
    download: '下载你的证书',
    preparing: '正在生成你的证书…',
    ready: '你的证书正在下载。',
    verify: '验证此证书',
    failed: '无法下载证书。',
  },
};

/** The certificate words for a tag, by the chrome's own rule (its language, else English). */
export function certificateStrings(tag: string | null | undefined): CertificateStrings {
  const lang = chromeLanguage(tag);
  return Object.prototype.hasOwnProperty.call(CERTIFICATE_STRINGS, lang)
    ? CERTIFICATE_STRINGS[lang]
    : CERTIFICATE_STRINGS.en;
}

/**
 * The file name of a `Content-Disposition` answer: the RFC 5987 `filename*` (UTF-8, what carries a non-ASCII
 * course title) first, then the plain `filename`; null when there is neither. Path characters never survive.
 */
export function dispositionFileName(header: string | null | undefined): string | null {
  if (!header) return null;
  let name: string | null = null;
  const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(header);
  if (star) {
    try {
      name = decodeURIComponent(star[1].trim());
    } catch {
      name = null;
    }
  }
  if (name === null) {
    const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))/.exec(header);
    if (plain) name = (plain[1] ?? plain[2] ?? '').replace(/\\(.)/g, '$1').trim();
  }
  const safe = name?.replace(/[\\/\u0000-\u001f]+/g, ' ').trim();
  return safe ? safe : null;
}
