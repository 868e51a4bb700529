import { expect } from 'chai';
import { isWholePdf } from '@lectern/certificates';

/** A download must never answer with a PDF cut short by a racing overwrite in the object store. */
describe('certificates: isWholePdf', () => {
  const whole = Buffer.from(
    '%PDF-1.3\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\nstartxref\n9\n%%EOF\n',
    'latin1',
  );
  it('accepts a complete file', () => expect(isWholePdf(whole)).to.equal(true));
  it('refuses an empty read, a truncated file and something else', () => {
    expect(isWholePdf(Buffer.alloc(0))).to.equal(false);
    expect(isWholePdf(whole.subarray(0, whole.length - 8))).to.equal(false);
    expect(isWholePdf(Buffer.from('<html>not a pdf</html>\n%%EOF'))).to.equal(false);
  });
});
