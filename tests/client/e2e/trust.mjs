// Restricted Mode: the folder is opened without trusting it. GradGuard only says it waits
// (the language status item; no notification, no interpreter run); trusting the folder then
// starts the server, once. Prints what it observed as one JSON object.
//
//   node trust.mjs <code-server url> <workspace folder> <artifacts dir>
import { goTo, installSquiggleProbe, nbsp, openFile, runCommand, scenario, shot as screenshot } from './ui.mjs';

const [url, workspace, artifacts] = process.argv.slice(2);
const shot = (name) => screenshot(artifacts, name);

async function languageStatus(page, text) {
    await page.locator('[id="status.languageStatus"]').hover();
    const status = page.locator('.monaco-hover:visible', { hasText: text });
    await status.first().waitFor();
    const seen = nbsp(await status.first().innerText());
    await page.mouse.move(5, 400);
    return seen;
}

await scenario(url, workspace, artifacts, async (observed, page) => {
    // The folder opens in Restricted Mode (VS Code may first ask whether to trust its authors: no).
    const dialog = page.locator('.monaco-dialog-box', { hasText: 'Do you trust the authors' });
    const restricted = page.locator('.statusbar-item', { hasText: 'Restricted Mode' });
    await dialog.or(restricted).first().waitFor();
    if (await dialog.count()) {
        await dialog.first().locator('.monaco-button', { hasText: "No, I don't trust the authors" }).click();
        await restricted.first().waitFor();
    }

    await openFile('train_leaky.py');
    observed.restrictedStatus = await languageStatus(page, 'waiting for workspace trust');
    observed.restrictedToasts = (await page.locator('.notification-toast').allInnerTexts()).map(nbsp);
    await shot('trust-1-restricted');

    // Trust the folder (Workspaces: Manage Workspace Trust, "Trust Folder").
    await runCommand('Workspaces: Manage Workspace Trust');
    const trust = page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust/ });
    await trust.first().waitFor();
    await trust.first().click();
    await page.locator('.workspace-trust-editor', { hasText: 'You trust this folder' }).first().waitFor();
    // The trust editor opens as a modal over the editors: close it.
    const modal = page.locator('.monaco-modal-editor-block');
    await page.keyboard.press('Escape');
    if (!(await modal.waitFor({ state: 'detached', timeout: 5000 }).then(() => true).catch(() => false))) {
        await modal.locator('.codicon-close').first().click();
        await modal.waitFor({ state: 'detached' });
    }
    await page.locator('.tab', { hasText: 'train_leaky.py' }).first().click();

    await goTo(47, 29);
    await installSquiggleProbe();
    await page.waitForFunction(() => window.__squiggles().some((s) => s.line === 47), null, { polling: 200 });
    observed.squiggles = await page.evaluate(() => window.__squiggles());
    observed.trustedStatus = await languageStatus(page, 'running');
    observed.toasts = (await page.locator('.notification-toast').allInnerTexts()).map(nbsp);
    await shot('trust-2-trusted');
});
