import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { imageKind, isFetchable, playableKind, svgHazard } from '@lectern/scorm';
import { fetchToFile } from '@lectern/outbound';

const hex = (h: string, pad = 16) => Buffer.concat([Buffer.from(h, 'hex'), Buffer.alloc(pad)]);

describe('SCORM media: what is fetched, what it is, what may go in', () => {
  it('images by their first bytes, whatever the URL or Content-Type said', () => {
    expect(imageKind(hex('89504e470d0a1a0a'))).to.equal('png');
    expect(imageKind(hex('ffd8ffe0'))).to.equal('jpg');
    expect(imageKind(Buffer.from('GIF87a....'))).to.equal('gif');
    expect(imageKind(Buffer.from('GIF89a....'))).to.equal('gif');
    expect(imageKind(Buffer.from('RIFF\0\0\0\0WEBPVP8 '))).to.equal('webp');
    expect(imageKind(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).to.equal('svg');
    expect(
      imageKind(
        Buffer.from(
          '\uFEFF<?xml version="1.0" encoding="UTF-8"?>\n<!-- made by hand -->\n' +
            '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n<svg>',
        ),
      ),
    ).to.equal('svg');
    // Entity declarations (an internal subset) are not an image we take; HTML, empty and short bodies neither.
    expect(imageKind(Buffer.from('<!DOCTYPE svg [<!ENTITY x "y">]><svg>'))).to.equal(null);
    expect(imageKind(Buffer.from('<!doctype html><html><svg></svg>'))).to.equal(null);
    expect(imageKind(Buffer.from('RIFF\0\0\0\0WAVEfmt '))).to.equal(null);
    expect(imageKind(Buffer.alloc(0))).to.equal(null);
    expect(imageKind(Buffer.from([0x89, 0x50]))).to.equal(null);
  });

  it('video and audio by their first bytes', () => {
    expect(playableKind(Buffer.from('\0\0\0\x18ftypisom\0\0'))).to.equal('mp4');
    expect(playableKind(Buffer.from('\0\0\0\x20ftypM4A \0\0'))).to.equal('m4a');
    expect(playableKind(hex('1a45dfa3'))).to.equal('webm');
    expect(playableKind(Buffer.from('OggS\0\x02'))).to.equal('ogg');
    expect(playableKind(Buffer.from('RIFF\0\0\0\0WAVEfmt '))).to.equal('wav');
    expect(playableKind(Buffer.from('ID3\x04\0'))).to.equal('mp3');
    expect(playableKind(hex('fffb9064'))).to.equal('mp3');
    expect(playableKind(hex('ffd8ffe0'))).to.equal(null); // a JPEG is not an MPEG frame
    expect(playableKind(Buffer.from('<html>'))).to.equal(null);
    expect(playableKind(hex('89504e470d0a1a0a'))).to.equal(null);
  });

  it('an SVG that could run script in the package origin is refused, a plain drawing is not', () => {
    expect(
      svgHazard('<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0h1"/><text>on = off</text></svg>'),
    ).to.equal(null);
    const bad = [
      '<svg><script>alert(1)</script></svg>',
      '<svg><svg:script href="x.js"/></svg>',
      '<svg onload="alert(1)"/>',
      '<svg><rect\nONCLICK = "x()"/></svg>',
      '<svg><a href="javascript:alert(1)"><rect/></a></svg>',
      '<svg><a href="java&#x09;script:alert(1)"/></svg>',
      '<svg><a href="&#106;avascript:alert(1)"/></svg>',
      '<svg><set attributeName="href" to="JaVaScRiPt:alert(1)"/></svg>',
      '<svg><foreignObject><body xmlns="http://www.w3.org/1999/xhtml"/></foreignObject></svg>',
      '<svg><iframe src="x"/></svg>',
      '<!DOCTYPE svg [<!ENTITY lol "lol">]><svg>&lol;</svg>',
    ];
    for (const s of bad) expect(svgHazard(s), s).to.be.a('string');
  });

  it('only absolute http(s) URLs are fetched; identifiers, data: URLs and paths stay as they are', () => {
    expect(isFetchable('https://cdn.example/a.png')).to.equal(true);
    expect(isFetchable('HTTP://cdn.example/a.png')).to.equal(true);
    for (const v of ['media://asset/1', 'data:image/png;base64,AAAA', '/a.png', 'media/abc.png', '', 3, null])
      expect(isFetchable(v), String(v)).to.equal(false);
  });

  it('the fetcher refuses a loopback or metadata address before connecting, and leaves no file', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'lectern-media-unit-'));
    try {
      for (const url of [
        'http://127.0.0.1:9/a.png',
        'http://169.254.169.254/latest/meta-data',
        'ftp://h/a.png',
      ]) {
        const file = path.join(dir, 'f');
        const budget = { remaining: 1000 };
        const got = await fetchToFile(url, {
          allowPrivate: false,
          maxBytes: 100,
          timeoutMs: 2000,
          file,
          budget,
        });
        expect(got.ok, url).to.equal(false);
        expect(got.ok ? '' : got.reason, url).to.match(/^refused: /);
        expect(existsSync(file)).to.equal(false);
        expect(budget.remaining).to.equal(1000);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
