import { Hover, MarkdownString, reset, Uri } from './vscodeMock';
import * as assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { plainCodes, previewRuleLinks } from '../common/hover';

beforeEach(reset);

test("a rule page's link opens the rendered page, with only the preview command trusted", () => {
    const hover = new Hover([new MarkdownString('**GG101** `graph-kept-across-iterations`: ... [GG101 rule page](file:///ws/docs/rules/GG101.md)')]);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const out = previewRuleLinks(hover as any) as any;
    const args = encodeURIComponent(JSON.stringify([{ $mid: 1, scheme: 'file', path: '/ws/docs/rules/GG101.md' }]));
    assert.equal(out.contents[0].value, `**GG101** \`graph-kept-across-iterations\`: ... [GG101 rule page](command:markdown.showPreview?${args})`);
    assert.deepEqual(out.contents[0].isTrusted, { enabledCommands: ['markdown.showPreview'] });
});

test('a hover without a rule link is returned as it is', () => {
    const hover = new Hover([new MarkdownString('**`torch.no_grad()`**: no graph is recorded')]);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    assert.equal(previewRuleLinks(hover as any), hover);
    assert.equal(previewRuleLinks(undefined), undefined);
});

test("a diagnostic's code is plain text (its link would open the page's Markdown source)", () => {
    const linked = { message: 'm', code: { value: 'GG101', target: Uri.parse('file:///ws/docs/rules/GG101.md') } };
    const plain = { message: 'n', code: 'GG202' };
    const none = { message: 'o' };
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    assert.deepEqual(plainCodes([linked, plain, none] as any[]), [{ message: 'm', code: 'GG101' }, { message: 'n', code: 'GG202' }, { message: 'o' }]);
});
