import { expect } from 'chai';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defaultPlayerAssetsDir, playerAssets, playerPageHtml, scriptJson } from '@lectern/player';

describe('player assets and boot page', () => {
  it('reads the built bundle from its manifest and serves only its own files by name', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'player-assets-'));
    await writeFile(
      path.join(dir, 'manifest.json'),
      JSON.stringify({
        js: { file: 'player-AB12.js', bytes: 10, gzipBytes: 5 },
        css: { file: 'player-CD34.css', bytes: 8, gzipBytes: 4 },
        gzipBytes: 9,
      }),
    );
    const a = playerAssets(dir);
    expect(a.js).to.include({ file: 'player-AB12.js', path: path.join(dir, 'player-AB12.js') });
    expect(a.js.contentType).to.equal('text/javascript; charset=utf-8');
    expect(a.css.contentType).to.equal('text/css; charset=utf-8');
    expect(a.gzipBytes).to.equal(9);
    expect(a.byName('player-CD34.css')).to.equal(a.css);
    for (const other of ['manifest.json', '../player-AB12.js', 'player-AB12.js/', ''])
      expect(a.byName(other)).to.equal(null);
  });

  it('says how to build the bundle when it is missing', () => {
    expect(() => playerAssets('/nonexistent/player')).to.throw(/npm run build/);
    expect(defaultPlayerAssetsDir()).to.equal(path.join(process.cwd(), 'dist', 'player'));
  });

  it('embeds the configuration as JSON that cannot close its script element', () => {
    const json = scriptJson({ title: '</script><script>alert(1)</script>', x: 'a\u2028b & <!--' });
    expect(json).to.not.match(/<|>|\u2028/);
    expect(JSON.parse(json)).to.deep.equal({
      title: '</script><script>alert(1)</script>',
      x: 'a\u2028b & <!--',
    });
    const html = playerPageHtml({
      config: { mode: 'run', apiBase: 'https://l.example', courseId: 'crs_1', identity: null, lang: 'ar' },
      assets: { js: { file: 'player-A.js' }, css: { file: 'player-B.css' } } as never,
      assetBase: '/player/assets/',
      title: 'A <b>course</b>',
      lang: 'ar',
      dir: 'rtl',
    });
    expect(html).to.contain('<html lang="ar" dir="rtl">');
    expect(html).to.contain('<title>A &lt;b&gt;course&lt;/b&gt;</title>');
    expect(html).to.contain('<link rel="stylesheet" href="/player/assets/player-B.css">');
    expect(html).to.contain('<script defer src="/player/assets/player-A.js"></script>');
    expect(html).to.contain(
      '<script type="application/json" id="lectern-player-config">{"mode":"run","apiBase":"https://l.example","courseId":"crs_1","identity":null,"lang":"ar"}</script>',
    );
  });
});
