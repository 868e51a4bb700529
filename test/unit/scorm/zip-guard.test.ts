import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isAppError } from '@lectern/errors';
import { ZipPackage, parseXml, unsafeName } from '@lectern/scorm';
import { zipOf, type ZipEntryInput } from '../../support/zip.js';

describe('scorm: the zip guard', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(path.join(os.tmpdir(), 'zip-guard-'))));
  after(() => rm(dir, { recursive: true, force: true }));

  let n = 0;
  async function open(entries: ZipEntryInput[] | Buffer): Promise<ZipPackage> {
    const file = path.join(dir, `p${n++}.zip`);
    await writeFile(file, Buffer.isBuffer(entries) ? entries : zipOf(entries));
    return ZipPackage.open(file);
  }
  async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
    try {
      await p;
    } catch (err) {
      expect(isAppError(err) && err.code).to.equal('invalid_request');
      return isAppError(err) ? err.issues?.[0]?.code : undefined;
    }
    return undefined;
  }

  it('names: relative ones pass; absolute, drive letters, .. segments and control characters do not', () => {
    for (const ok of ['a.html', 'res/a b.html', 'x/./y.js', '..foo/bar', 'a..b'])
      expect(unsafeName(ok), ok).to.equal(null);
    expect(unsafeName('/etc/passwd')).to.equal('absolute path');
    expect(unsafeName('\\\\server\\share')).to.equal('absolute path');
    expect(unsafeName('C:\\x')).to.equal('absolute path');
    expect(unsafeName('c:/x')).to.equal('absolute path');
    expect(unsafeName('a/../../b')).to.match(/escapes/);
    expect(unsafeName('a\\..\\b')).to.match(/escapes/);
    expect(unsafeName('a\u0000b')).to.match(/control/);
  });

  it('reads entries by exact name or, failing that, ignoring case; sizes are the inflated ones', async () => {
    const pkg = await open([
      { name: 'IMSManifest.xml', data: '<manifest/>' },
      { name: 'dir/', data: '' },
      { name: 'res\\a.html', data: 'hello', method: 'store' },
    ]);
    expect([...pkg.entries.keys()]).to.deep.equal(['IMSManifest.xml', 'res/a.html']);
    expect(pkg.find('imsmanifest.xml')?.name).to.equal('IMSManifest.xml');
    const a = pkg.find('res/a.html')!;
    expect((await pkg.read(a, 100)).toString()).to.equal('hello');
  });

  it('checks the central directory before inflating anything', async () => {
    expect(await codeOf(open(Buffer.from('PK not really')))).to.equal('not_a_zip');
    expect(await codeOf(open([{ name: 'x', data: Buffer.alloc(2 * 1024 * 1024) }]))).to.equal(
      'compression_ratio',
    );
    expect(await codeOf(open([{ name: 'x', data: 'x', flags: 1 }]))).to.equal('encrypted');
    expect(await codeOf(open([{ name: 'l', data: 'x', unixMode: 0o120777 }]))).to.equal('symlink');
    expect(
      await codeOf(
        open([
          { name: 'a', data: 'x' },
          { name: 'a', data: 'y' },
        ]),
      ),
    ).to.equal('duplicate_entry');
  });

  it('counts bytes while inflating: a size that lies either way is refused', async () => {
    const big = await open([{ name: 'x', data: 'x'.repeat(1000), declaredSize: 10 }]);
    expect(await codeOf(big.read(big.find('x')!, 1e6))).to.equal('size_mismatch');
    const small = await open([{ name: 'x', data: 'x'.repeat(10), declaredSize: 1000, method: 'store' }]);
    expect(await codeOf(small.read(small.find('x')!, 1e6))).to.equal('size_mismatch');
    const capped = await open([{ name: 'x', data: 'x'.repeat(1000) }]);
    expect(await codeOf(capped.read(capped.find('x')!, 100))).to.equal('entry_too_large');
  });

  it('XML: any DOCTYPE is refused before parsing; text that is not XML too; entities in text are decoded', () => {
    const code = (xml: string) => {
      try {
        parseXml(Buffer.from(xml), 'm.xml');
      } catch (err) {
        return isAppError(err) ? err.issues?.[0]?.code : 'other';
      }
      return null;
    };
    expect(code('<!DOCTYPE m><m/>')).to.equal('xml_doctype');
    expect(code('<m><!ENTITY x "y"></m>')).to.equal('xml_doctype');
    expect(code('not xml')).to.equal('not_xml');
    expect(code('<m><a></m>')).to.equal('not_xml');
    expect(code('\uFEFF<?xml version = "1.0" standalone = "no"?><m a="1"/>')).to.equal(null);
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<m>é</m>', 'utf16le')]);
    expect(parseXml(utf16, 'm.xml')).to.deep.equal({ m: 'é' });
  });
});
