/**
 * The media store answers a browser on another origin: a video with caption tracks is loaded with CORS
 * (docs/blocks.md "video"), so a signed GET of the loopback store carries Access-Control-Allow-Origin.
 */
import { expect } from 'chai';
import { context } from '../support/context.js';

describe('media: signed URLs of the loopback store answer other origins (CORS)', () => {
  it('a presigned GET with an Origin gets Access-Control-Allow-Origin; the bytes are the object', async () => {
    const { storage } = context();
    const key = `test/cors-${Date.now()}.mp4`;
    await storage.put(key, Buffer.from('not really a video'), 'video/mp4');
    const url = await storage.presignGet(key, 60);
    expect(new URL(url).origin).not.to.equal('http://lectern.test');
    const res = await fetch(url, { headers: { Origin: 'http://lectern.test' } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('access-control-allow-origin')).to.be.oneOf(['*', 'http://lectern.test']);
    expect(await res.text()).to.equal('not really a video');
    await storage.remove(key);
  });
});
