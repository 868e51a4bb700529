import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { runTokens, scopedTokens } from '@lectern/learner-runs';

const kind = {
  audience: 'lectern:test',
  refused: 'Test token refused',
  notOurs: 'not ours',
  expired: 'expired',
};
const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    return (err as Error).message;
  }
  return 'accepted';
};

describe('learner runs: scoped tokens, verified once and remembered until exp', () => {
  it('a remembered token is still refused once its exp has passed', async function () {
    this.timeout(5_000);
    const key = new Uint8Array(randomBytes(32));
    const tokens = scopedTokens(() => key, kind);
    // exp is whole seconds: the next second boundary, so the wait stays under one second.
    const exp = Math.floor(Date.now() / 1000) + 1;
    const token = await new SignJWT({ wid: 'wsp_1' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject('cmp_1')
      .setAudience(kind.audience)
      .setExpirationTime(exp)
      .sign(key);
    expect((await tokens.verify(token)).sub).to.equal('cmp_1');
    expect((await tokens.verify(token)).sub).to.equal('cmp_1');
    await new Promise((r) => setTimeout(r, exp * 1000 - Date.now() + 5));
    expect(await refusal(tokens.verify(token))).to.equal('Test token refused: expired');
  });

  it('a token verified under one key is refused once the key changes', async () => {
    let key = new Uint8Array(randomBytes(32));
    const run = runTokens(() => key, 3600);
    const token = await run.sign({ completionId: 'cmp_1', workspaceId: 'wsp_1' });
    expect(await run.verify(token, 'cmp_1')).to.deep.equal({ completionId: 'cmp_1', workspaceId: 'wsp_1' });
    key = new Uint8Array(randomBytes(32));
    expect(await refusal(run.verify(token, 'cmp_1'))).to.equal(
      'Run token refused: it is not a valid run token of this service',
    );
  });

  it('a remembered token still answers only for its own run, and a tampered copy is verified afresh', async () => {
    const key = new Uint8Array(randomBytes(32));
    const run = runTokens(() => key, 3600);
    const token = await run.sign({ completionId: 'cmp_1', workspaceId: 'wsp_1' });
    await run.verify(token, 'cmp_1');
    expect(await refusal(run.verify(token, 'cmp_2'))).to.equal(
      'Run token refused: it belongs to another run',
    );
    const [h, p, s] = token.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), sub: 'cmp_2' })).toString('base64url')}.${s}`;
    expect(await refusal(run.verify(forged, 'cmp_2'))).to.equal(
      'Run token refused: it is not a valid run token of this service',
    );
  });
});
