import { expect } from 'chai';
import { buildManifest, fontKind, ncName, packageFileName, xmlEscape, xmlLang } from '@lectern/scorm';
import { validateManifest, xpathString } from '../../support/scorm.js';

const files = ['index.html', 'player-ABC.js', 'player-DEF.css', 'lectern/course.json', 'fonts/0123.woff2'];

describe('scorm: the manifest', () => {
  it('escapes the five markup characters and drops what XML 1.0 cannot hold', () => {
    expect(xmlEscape(`a & b < c > d " e ' f`)).to.equal('a &amp; b &lt; c &gt; d &quot; e &apos; f');
    expect(xmlEscape('bell\u0007 nul\u0000 tab\t ok')).to.equal('bell nul tab\t ok');
    expect(xmlEscape('lone \uD800 surrogate, pair \uD83D\uDE00')).to.equal(
      'lone  surrogate, pair \uD83D\uDE00',
    );
    expect(xmlEscape('&amp;')).to.equal('&amp;amp;');
  });

  it('identifiers are NCNames; a locale xml:lang cannot carry is left out', () => {
    expect(ncName('lectern-crs_01')).to.equal('lectern-crs_01');
    expect(ncName('1 bad:id')).to.equal('_1_bad_id');
    expect(xmlLang('pt-BR')).to.equal('pt-BR');
    expect(xmlLang('zh-Hant-TW')).to.equal('zh-Hant-TW');
    expect(xmlLang('en-US-u-ca-buddhist')).to.equal('en-US-u-ca-buddhist');
    expect(xmlLang('x_y')).to.equal(null);
  });

  for (const version of ['scorm12', 'scorm2004'] as const) {
    for (const [name, title, lang] of [
      ['markup characters', `Q&A: <b>"quotes"</b> & 'apostrophes' ]]> --> <!--`, 'en'],
      ['Hebrew (RTL)', 'בטיחות באש: "מבוא" & <סיכום>', 'he'],
      ['Arabic with bidi controls', '\u202Bالسلامة\u202C & الأمان', 'ar'],
      ['control characters', 'Tab\tbell\u0007end', 'fr'],
      ['a locale xml:lang cannot hold', 'Plain', 'x_y'],
    ] as const) {
      it(`${version}: ${name} — valid against the XSDs, title round-trips through a parser`, async () => {
        const xml = buildManifest({ version, courseId: 'crs_01', title, lang, files });
        await validateManifest(xml, version);
        // What a parser reads back is the title, less the characters XML cannot hold.
        const clean = title.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g, '');
        const org = "//*[local-name()='organization']/*[local-name()='title']";
        expect(await xpathString(xml, org)).to.equal(clean);
        expect(await xpathString(xml, "//*[local-name()='item']/*[local-name()='title']")).to.equal(clean);
        const marker = version === 'scorm12' ? 'metadatascheme' : 'metadataSchema';
        expect(await xpathString(xml, `//*[local-name()='${marker}']`)).to.equal('Lectern course');
        for (const f of files) expect(xml).to.include(`<file href="${f}"/>`);
        expect(xml).to.include(
          version === 'scorm12'
            ? 'adlcp:scormtype="sco" href="index.html"'
            : 'adlcp:scormType="sco" href="index.html"',
        );
      });
    }
  }

  it('the package file name: an ASCII slug of the title, else the course id', () => {
    expect(packageFileName('Fire & "safety" <basics>', 'crs_1', 'scorm2004')).to.equal(
      'fire-safety-basics-scorm2004.zip',
    );
    expect(packageFileName('Sécurité incendie', 'crs_1', 'scorm12')).to.equal(
      'securite-incendie-scorm12.zip',
    );
    expect(packageFileName('בטיחות', 'crs_1', 'scorm12')).to.equal('crs_1-scorm12.zip');
    expect(packageFileName('x'.repeat(200), 'crs_1', 'scorm12')).to.equal(`${'x'.repeat(60)}-scorm12.zip`);
  });

  it('fonts are recognised by their magic bytes only', () => {
    expect(fontKind(Buffer.from('wOF2....'))).to.equal('woff2');
    expect(fontKind(Buffer.from('wOFF....'))).to.equal('woff');
    expect(fontKind(Buffer.from('OTTO....'))).to.equal('otf');
    expect(fontKind(Buffer.from([0, 1, 0, 0, 0, 0]))).to.equal('ttf');
    expect(fontKind(Buffer.from('<svg>'))).to.equal(null);
    expect(fontKind(Buffer.from('wO'))).to.equal(null);
  });
});
