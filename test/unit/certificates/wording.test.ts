import { expect } from 'chai';
import { CERTIFICATE_WORDING, certificateWording, localizedDesign } from '@lectern/certificates';
import { ASSERTED_IDENTITY_NOTE, CERTIFICATE_DEFAULTS } from '@lectern/contracts';
import {
  CERTIFICATE_KEYS,
  CERTIFICATE_STRINGS,
  CHROME_LANGUAGES,
  PlayerClient,
  certificateStrings,
  dispositionFileName,
  type FetchAnswer,
} from '@lectern/player';

describe('certificate wording: the run’s language on the PDF and in the player', () => {
  it('every language of the player’s interface has the PDF wording and the player’s download words', () => {
    for (const lang of CHROME_LANGUAGES) {
      const w = CERTIFICATE_WORDING[lang];
      expect(w, lang).to.be.an('object');
      for (const text of [w.eyebrow, w.bodyText, w.assertedNote]) expect(text.trim(), lang).not.to.equal('');
      for (const key of CERTIFICATE_KEYS)
        expect(CERTIFICATE_STRINGS[lang]?.[key]?.trim(), `${lang}.${key}`).to.be.ok;
      if (lang !== 'en') {
        expect(w.eyebrow, lang).not.to.equal(CERTIFICATE_DEFAULTS.eyebrow);
        expect(w.bodyText, lang).not.to.equal(CERTIFICATE_DEFAULTS.bodyText);
        expect(CERTIFICATE_STRINGS[lang].download, lang).not.to.equal(CERTIFICATE_STRINGS.en.download);
      }
    }
    expect(certificateWording('en')).to.deep.equal({
      eyebrow: 'Certificate of completion',
      bodyText: 'has successfully completed',
      assertedNote: ASSERTED_IDENTITY_NOTE,
    });
  });

  it('a tag is read by its language; an unknown or odd one is English', () => {
    expect(certificateWording('fr-CA').eyebrow).to.equal('Certificat de réussite');
    expect(certificateWording('PT_br').eyebrow).to.equal(CERTIFICATE_WORDING.pt.eyebrow);
    for (const odd of ['xx', '', '__proto__', 'constructor', 'toString'])
      expect(certificateWording(odd).eyebrow, odd).to.equal('Certificate of completion');
    expect(certificateStrings('zh-Hant').download).to.equal(CERTIFICATE_STRINGS.zh.download);
    expect(certificateStrings(undefined).download).to.equal('Download your certificate');
    for (const odd of ['__proto__', 'constructor', 'hasOwnProperty'])
      expect(certificateStrings(odd).download, odd).to.equal('Download your certificate');
  });

  describe('localizedDesign (the issued snapshot)', () => {
    it('English with no translation keeps the tokens exactly as they are', () => {
      expect(localizedDesign({}, 'en', {})).to.deep.equal({});
      const tokens = { eyebrow: 'Award', showScore: true };
      expect(localizedDesign(tokens, 'en-GB', {})).to.deep.equal(tokens);
    });

    it('another language fills only the eyebrow and body text the template leaves to the built-in design', () => {
      expect(localizedDesign({}, 'fr', {})).to.deep.equal({
        eyebrow: 'Certificat de réussite',
        bodyText: 'a suivi avec succès la formation',
      });
      // An empty text is the author hiding the line: kept empty.
      expect(localizedDesign({ eyebrow: '', bodyText: 'completed' }, 'de', {})).to.deep.equal({
        eyebrow: '',
        bodyText: 'completed',
      });
    });

    it('translated template texts replace only texts the template has, cut to the token limit without splitting a pair', () => {
      const d = localizedDesign({ eyebrow: 'Award', footerText: 'Small print', issuerName: '' }, 'fr', {
        eyebrow: 'Distinction',
        issuerName: 'Académie',
        signatureName: 'Jeanne',
        footerText: '   ',
      });
      expect(d).to.deep.equal({
        eyebrow: 'Distinction',
        footerText: 'Small print',
        issuerName: '',
        bodyText: 'a suivi avec succès la formation',
      });
      const long = localizedDesign({ eyebrow: 'Award' }, 'ja', { eyebrow: 'a'.repeat(119) + '😀' });
      expect(long.eyebrow).to.equal('a'.repeat(119));
      expect(
        localizedDesign({ eyebrow: 'Award' }, 'ja', { eyebrow: 'b'.repeat(500) }).eyebrow,
      ).to.have.length(120);
    });
  });

  describe('the player’s download', () => {
    it('reads the file name from Content-Disposition (RFC 5987 first), never with a path', () => {
      expect(
        dispositionFileName('attachment; filename="Safety 101 - certificate LC-2345-6789-ABCD.pdf"'),
      ).to.equal('Safety 101 - certificate LC-2345-6789-ABCD.pdf');
      expect(
        dispositionFileName(
          `attachment; filename="S?curit? - certificate X.pdf"; filename*=UTF-8''S%C3%A9curit%C3%A9%20-%20certificate%20X.pdf`,
        ),
      ).to.equal('Sécurité - certificate X.pdf');
      expect(dispositionFileName('attachment; filename="../../etc/passwd"')).to.equal('.. .. etc passwd');
      expect(dispositionFileName("attachment; filename*=UTF-8''%E0%A4%A")).to.equal(null);
      expect(dispositionFileName('attachment')).to.equal(null);
      expect(dispositionFileName(null)).to.equal(null);
    });

    it('PlayerClient.certificate: the PDF with its name, serial and verify URL; a refusal is an error with the server’s words', async () => {
      const calls: { url: string; headers: Record<string, string> }[] = [];
      const answer = (status: number, headers: Record<string, string>, body: unknown): FetchAnswer => ({
        status,
        json: async () => body,
        headers: { get: (n) => headers[n.toLowerCase()] ?? null },
        blob: async () => new Blob(['%PDF-1.7']),
      });
      let next = answer(
        200,
        {
          'content-disposition': 'attachment; filename="Course - certificate LC-2345-6789-ABCD.pdf"',
          'certificate-serial': 'LC-2345-6789-ABCD',
          'certificate-verify-url': 'https://lectern.example/verify/LC-2345-6789-ABCD',
        },
        null,
      );
      const client = new PlayerClient('https://lectern.example/player/v1', async (url, init) => {
        calls.push({ url, headers: init.headers });
        return next;
      });
      const file = await client.certificate('cmp_1/../x', 'tok');
      expect(calls[0].url).to.equal('https://lectern.example/player/v1/runs/cmp_1%2F..%2Fx/certificate');
      expect(calls[0].headers.authorization).to.equal('Bearer tok');
      expect(file).to.include({
        fileName: 'Course - certificate LC-2345-6789-ABCD.pdf',
        serial: 'LC-2345-6789-ABCD',
        verifyUrl: 'https://lectern.example/verify/LC-2345-6789-ABCD',
      });
      expect(await file.blob.text()).to.equal('%PDF-1.7');

      next = answer(
        403,
        {},
        { error: 'forbidden', message: 'The certificate needs a score of at least 75%' },
      );
      const refused = await client.certificate('cmp_1', 'tok').catch((e: unknown) => e);
      expect(refused).to.include({
        status: 403,
        code: 'forbidden',
        message: 'The certificate needs a score of at least 75%',
      });
    });
  });
});
