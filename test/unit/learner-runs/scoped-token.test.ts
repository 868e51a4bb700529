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
  it('a remembered token is still refused once its exp has passed', async () => {
    const key = new Uint8Array(randomBytes(32));
    // The tokens' clock, stepped by the test: nothing here depends on where the wall clock is in its second.
    let nowMs = Date.UTC(2026, 0, 1, 12, 0, 0, 999);
    const tokens = scopedTokens(
      () => key,
      kind,
      () => nowMs,
    );
    const exp = Math.floor(nowMs / 1000) + 1;
    const token = await new SignJWT({ wid: 'wsp_1' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject('cmp_1')
      .setAudience(kind.audience)
      .setExpirationTime(exp)
      .sign(key);
    expect((await tokens.verify(token)).sub).to.equal('cmp_1');
    nowMs = exp * 1000 - 1;
    expect((await tokens.verify(token)).sub, 'remembered, 1 ms before exp').to.equal('cmp_1');
    // jose's rule, kept by the remembered copy: expired once now >= exp.
    nowMs = exp * 1000;
    expect(await refusal(tokens.verify(token))).to.equal('Test token refused: expired');
  });

  it('a token signed with a ttl expires on the injected clock, not the wall clock', async () => {
    const key = new Uint8Array(randomBytes(32));
    let nowMs = Date.UTC(2030, 5, 1);
    const tokens = scopedTokens(
      () => key,
      kind,
      () => nowMs,
    );
    const { token, exp } = await tokens.sign('cmp_1', 'wsp_1', { ttlSeconds: 60 });
    expect(exp).to.equal(nowMs / 1000 + 60);
    expect((await tokens.verify(token)).wid).to.equal('wsp_1');
    nowMs += 60_000;
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
