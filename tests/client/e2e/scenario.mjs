// One session in a real VS Code (code-server) page, driven like a person would:
// open a leaky example, read the squiggles, hover, Problems panel, quick fix, and
// fix-all on save. Every wait polls the UI (or the file on disk); nothing sleeps.
// Prints what it observed as one JSON object; the pytest wrapper asserts on it.
//
//   node scenario.mjs <code-server url> <workspace folder> <artifacts dir>
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';

const [url, workspace, artifacts] = process.argv.slice(2);
const TIMEOUT = 90_000; // the first analysis includes the server's start-up on a busy 2-core machine
const nbsp = (s) => s.replace(/\u00a0/g, ' ');

const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
});
const observed = {};
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
page.setDefaultTimeout(TIMEOUT);
const shot = (name) => page.screenshot({ path: path.join(artifacts, `${name}.png`) });

try {
    await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
    await openFile('train_leaky.py');

    // 1. The squiggle on the leaky line (47: `epoch_losses.append(loss)`).
    await goTo(47, 29);
    await installSquiggleProbe();
    await page.waitForFunction(() => window.__squiggles().some((s) => s.line === 47), null, { polling: 200 });
    observed.squiggles = await page.evaluate(() => window.__squiggles());
    await shot('01-squiggle');

    // 2. The hover on the squiggle: the diagnostic and the rule's explanation.
    const box = await page.evaluate(() => window.__squiggleBox(47));
    await page.mouse.move(box.x, box.y);
    const hover = page.locator('.monaco-hover:visible', { hasText: 'What it does' });
    await hover.first().waitFor();
    observed.hover = nbsp(await hover.first().innerText());
    await shot('02-hover');
    await page.keyboard.press('Escape');
    await page.mouse.move(5, 400);
    await page.locator('.monaco-hover:visible').waitFor({ state: 'detached' }).catch(() => undefined);

    // 3. The Problems panel.
    await page.keyboard.press('Control+Shift+M');
    const row = page.locator('.markers-panel .monaco-list-row', { hasText: '[Ln 47, Col 29]' });
    await row.first().waitFor();
    observed.problems = (await page.locator('.markers-panel .monaco-list-row').allInnerTexts()).map(nbsp);
    await shot('03-problems');

    // 4. The quick fix from Ctrl+. on the finding, applied.
    await goTo(47, 29);
    await page.keyboard.press('Control+.');
    const menu = page.locator('.action-widget .monaco-list-row');
    await menu.first().waitFor();
    await page.locator('.action-widget', { hasText: 'Store `loss.detach()`' }).waitFor();
    observed.quickFixes = (await menu.allInnerTexts()).map(nbsp);
    await shot('04-quick-fix-menu');
    const file = path.join(workspace, 'train_leaky.py');
    const before = fs.readFileSync(file, 'utf8');
    await page.locator('.action-widget .monaco-list-row', { hasText: 'Store `loss.detach()`' }).first().click();
    await page.locator('.view-line', { hasText: 'epoch_losses.append(loss.detach())' }).waitFor();
    // Saved without save participants, so the on-save fix-all does not mix in.
    await runCommand('File: Save without Formatting');
    observed.quickFixedText = await fileChange(file, before);
    await shot('05-quick-fix-applied');

    // 5. Fix-all on an explicit save (editor.codeActionsOnSave in the workspace settings).
    await openFile('rnn_leaky.py');
    await page.locator('.markers-panel .monaco-list-row', { hasText: 'GG102' }).first().waitFor();
    const rnn = path.join(workspace, 'rnn_leaky.py');
    const rnnBefore = fs.readFileSync(rnn, 'utf8');
    await goTo(1, 1);
    await page.keyboard.type(' ');
    await page.keyboard.press('Backspace'); // the buffer is dirty, its text unchanged
    await page.keyboard.press('Control+s');
    observed.fixAllOnSaveText = await fileChange(rnn, rnnBefore);
    await goTo(39, 1);
    await page.locator('.view-line', { hasText: 'hidden = hidden.detach()' }).waitFor();
    await shot('06-fix-all-on-save');
} catch (e) {
    observed.error = String(e?.stack ?? e);
    await shot('failure').catch(() => undefined);
} finally {
    await browser.close();
}
console.log(JSON.stringify(observed));

async function openFile(name) {
    const entry = page.locator('.explorer-folders-view .monaco-list-row', { hasText: name });
    await entry.first().waitFor();
    await entry.first().click();
    await page.locator('.tab.active', { hasText: name }).waitFor();
    await page.locator('.monaco-editor .view-lines').first().waitFor();
}

async function quickInput(opener, text) {
    await page.keyboard.press(opener);
    const input = page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(text);
}

async function goTo(line, column) {
    await page.locator('.monaco-editor .view-lines').first().click();
    await quickInput('Control+g', `:${line}:${column}`); // the go-to-line prefix is part of the input
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    await page.locator('.editor-status-selection, .statusbar-item', { hasText: `Ln ${line}, Col ${column}` }).first().waitFor();
}

async function runCommand(title) {
    await quickInput('F1', `>${title}`);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor();
    await page.keyboard.press('Enter');
}

/** Polls the file until its text differs from `before`, then returns it. */
async function fileChange(file, before) {
    const deadline = Date.now() + TIMEOUT;
    for (;;) {
        const text = fs.readFileSync(file, 'utf8');
        if (text !== before) {
            return text;
        }
        if (Date.now() > deadline) {
            throw new Error(`${file} was not saved`);
        }
        await page.waitForTimeout(100); // the poll interval
    }
}

/** Page helpers: each squiggle's line number and 1-based column range, from the editor's DOM. */
async function installSquiggleProbe() {
    await page.evaluate(() => {
        const editor = () => document.querySelector('.monaco-editor');
        const charWidth = () => {
            const spans = [...editor().querySelectorAll('.view-line > span')];
            const line = spans.find((s) => s.textContent.length > 20);
            return line.getBoundingClientRect().width / line.textContent.length;
        };
        const lineAt = (top) => {
            const numbers = [...editor().querySelectorAll('.margin-view-overlays > div')];
            const row = numbers.find((d) => d.style.top === top);
            return row ? Number(row.querySelector('.line-numbers')?.textContent) : undefined;
        };
        window.__squiggles = () => {
            const width = charWidth();
            return [...editor().querySelectorAll('.view-overlays [class*="squiggly-"]')].map((el) => ({
                line: lineAt(el.parentElement.style.top),
                start: Math.round(parseFloat(el.style.left) / width) + 1,
                end: Math.round((parseFloat(el.style.left) + parseFloat(el.style.width)) / width) + 1,
                severity: /squiggly-(\w+)/.exec(el.className)[1],
            }));
        };
        window.__squiggleBox = (line) => {
            const el = [...editor().querySelectorAll('.view-overlays [class*="squiggly-"]')]
                .find((e) => lineAt(e.parentElement.style.top) === line);
            const r = el.getBoundingClientRect();
            return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
        };
    });
}
