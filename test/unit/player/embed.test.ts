import { expect } from 'chai';
import { embedSandbox } from '@lectern/player';

describe('player: the sandbox of an embed block frame', () => {
  const page = 'https://lectern.example.com';
  const tokens = (url: string) => embedSandbox(url, page).split(' ');

  it('a frame of another origin keeps scripts and its own origin (third-party widgets need both)', () => {
    for (const url of [
      'https://www.youtube.com/embed/x',
      'https://lectern.example.com:8443/x',
      'http://lectern.example.com/x',
    ])
      expect(tokens(url), url).to.include.members([
        'allow-scripts',
        'allow-same-origin',
        'allow-popups',
        'allow-forms',
      ]);
  });

  it("a frame of the page's own origin never gets allow-same-origin beside allow-scripts", () => {
    for (const url of [
      'https://lectern.example.com/embed/crs_1',
      'https://LECTERN.example.com:443/verify/x',
      '/x',
    ]) {
      const t = tokens(url);
      expect(t, url).to.include('allow-scripts');
      expect(t, url).to.not.include('allow-same-origin');
    }
  });

  it('a URL it cannot read gets no allow-same-origin either', () => {
    expect(tokens('http://[bad')).to.not.include('allow-same-origin');
  });
});
