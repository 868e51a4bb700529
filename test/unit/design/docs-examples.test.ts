import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { CertificateTemplateInput, PALETTE_KEYS, THEME_CONCEPTS, ThemeInput } from '@lectern/contracts';

/** docs/design-tokens.md is the reference; its examples and lists must match the schemas. */
describe('docs/design-tokens.md', () => {
  const doc = readFileSync(new URL('../../../docs/design-tokens.md', import.meta.url), 'utf8');
  const examples = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]) as unknown);

  it('has a theme example that ThemeInput accepts', () => {
    const r = ThemeInput.safeParse(examples[0]);
    expect(r.success, JSON.stringify(r.error?.issues)).to.equal(true);
  });

  it('has a certificate template example that CertificateTemplateInput accepts', () => {
    const r = CertificateTemplateInput.safeParse(examples[1]);
    expect(r.success, JSON.stringify(r.error?.issues)).to.equal(true);
  });

  it('documents every palette key and concept', () => {
    for (const key of PALETTE_KEYS) expect(doc).to.contain(`| \`${key}\` |`);
    for (const concept of THEME_CONCEPTS) expect(doc).to.contain(`\`${concept}\``);
  });
});
