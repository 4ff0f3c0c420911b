// The one-click install: the workspace's interpreter lacks GradGuard; the notification
// says so, "Install GradGuard" makes the extension's own venv (with that interpreter) and
// pip-installs the wheel the .vsix carries into it, and the server
// starts (the squiggle appears; its hover's rule link opens the rendered page). Prints what it observed as one JSON object.
//
//   node install.mjs <code-server url> <workspace folder> <artifacts dir>
import { goTo, installSquiggleProbe, nbsp, openFile, ruleLinkFromHover, scenario, shot as screenshot } from './ui.mjs';

const [url, workspace, artifacts] = process.argv.slice(2);
const shot = (name) => screenshot(artifacts, name);
const PIP_TIMEOUT = 600_000; // dependencies come from the package index

await scenario(url, workspace, artifacts, async (observed, page) => {
    await openFile('train_leaky.py');
    const toast = page.locator('.notification-toast', { hasText: 'GradGuard is not installed' });
    await toast.first().waitFor();
    observed.notification = nbsp(await toast.first().locator('.notification-list-item-message').innerText());
    observed.buttons = (await toast.first().locator('.monaco-button').allInnerTexts()).map(nbsp);
    await shot('install-1-notification');
    await toast.first().locator('.monaco-button', { hasText: 'Install GradGuard' }).click();

    await goTo(47, 29);
    await installSquiggleProbe();
    await page.waitForFunction(() => window.__squiggles().some((s) => s.line === 47), null, { polling: 500, timeout: PIP_TIMEOUT });
    observed.squiggles = await page.evaluate(() => window.__squiggles());
    await shot('install-2-running');

    // The server from the wheel has no checkout's docs: its rule link still opens the rendered page.
    const rule = await ruleLinkFromHover(47, 'GG101');
    observed.hover = rule.hover;
    observed.rulePreviewTab = rule.previewTab;
    observed.rulePreview = rule.preview;
    await shot('install-3-rule-page');
});
