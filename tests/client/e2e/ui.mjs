// Driving VS Code's UI in code-server like a person would, for the e2e scenarios.
// Every wait polls the UI (or a file on disk); nothing sleeps to synchronise.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';

export const TIMEOUT = 90_000; // the first analysis includes the server's start-up on a busy 2-core machine
export const nbsp = (s) => s.replace(/\u00a0/g, ' ');

let page;

/**
 * Opens `url` on `workspace` in headless Chromium, runs `steps(observed)`, and prints what
 * was observed as one JSON line (with `error` and a `failure` screenshot if a step failed).
 */
export async function scenario(url, workspace, artifacts, steps) {
    const browser = await chromium.launch({
        executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
            '--disable-component-update', '--disable-sync'],
    });
    const observed = {};
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(TIMEOUT);
    try {
        await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
        await steps(observed, page);
    } catch (e) {
        observed.error = String(e?.stack ?? e);
        await shot(artifacts, 'failure').catch(() => undefined);
    } finally {
        await browser.close();
    }
    console.log(JSON.stringify(observed));
}

export function shot(artifacts, name) {
    return page.screenshot({ path: path.join(artifacts, `${name}.png`) });
}

export async function openFile(name) {
    const entry = page.locator('.explorer-folders-view .monaco-list-row', { hasText: name });
    await entry.first().waitFor();
    await entry.first().click();
    await page.locator('.tab.active', { hasText: name }).waitFor();
    await page.locator('.monaco-editor .view-lines').first().waitFor();
}

export async function quickInput(opener, text) {
    await page.keyboard.press(opener);
    const input = page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(text);
}

export async function goTo(line, column) {
    await page.locator('.monaco-editor .view-lines').first().click();
    await quickInput('Control+g', `:${line}:${column}`); // the go-to-line prefix is part of the input
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    await page.locator('.editor-status-selection, .statusbar-item', { hasText: `Ln ${line}, Col ${column}` }).first().waitFor();
}

export async function runCommand(title) {
    await quickInput('F1', `>${title}`);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor();
    await page.keyboard.press('Enter');
}

/** Polls the file until its text differs from `before` and has settled, then returns it. */
export async function fileChange(file, before) {
    const deadline = Date.now() + TIMEOUT;
    let last = before;
    for (;;) {
        // The editor saves by truncating the file and writing it, so a read can land in
        // between and see it empty: the save is over when two reads agree.
        const text = fs.readFileSync(file, 'utf8');
        if (text !== before && text === last) {
            return text;
        }
        last = text;
        if (Date.now() > deadline) {
            throw new Error(`${file} was not saved`);
        }
        await page.waitForTimeout(100); // the poll interval
    }
}

/** Page helpers: each squiggle's line number and 1-based column range, from the editor's DOM. */
export async function installSquiggleProbe() {
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

/**
 * Hovers the squiggle on `line`, reads the hover, clicks its link to the rule's page and reads
 * the page as the Markdown preview renders it (its first line: the heading). `shown()` runs
 * while the hover is shown (a screenshot).
 */
export async function ruleLinkFromHover(line, code, shown = async () => undefined) {
    const box = await page.evaluate((l) => window.__squiggleBox(l), line);
    await page.mouse.move(box.x, box.y);
    const hover = page.locator('.monaco-hover:visible', { hasText: 'rule page' });
    await hover.first().waitFor();
    // VS Code asks for the marker's code actions after it shows the hover ("Checking for quick
    // fixes..."), so its "Quick Fix..." link comes later: read the hover once that row settled.
    await hover.first().locator('a', { hasText: 'Quick Fix' }).first().waitFor({ timeout: 15000 }).catch(() => undefined);
    const seen = { hover: nbsp(await hover.first().innerText()) };
    seen.links = (await hover.first().locator('a').allInnerTexts()).map(nbsp);
    await shown();
    await hover.first().locator('a', { hasText: `${code} rule page` }).click();
    const preview = page.locator('.tab', { hasText: `Preview ${code}.md` });
    await preview.first().waitFor({ timeout: 30000 });
    seen.previewTab = nbsp(await preview.first().innerText());
    // The preview renders in a webview (nested frames): wait for the page's text there.
    let rendered = '';
    for (let i = 0; i < 100 && !rendered; i++) {
        for (const frame of page.frames()) {
            const text = await frame.evaluate(() => (document.body ? document.body.innerText : '')).catch(() => '');
            if (text.includes('What it does')) {
                rendered = text;
                break;
            }
        }
        if (!rendered) await page.waitForTimeout(300); // the poll interval
    }
    seen.preview = nbsp(rendered.trim().split('\n')[0] || '');
    return seen;
}

/** Back to the editor of `file`, no hover left open. */
export async function backTo(file) {
    await page.locator('.tab', { hasText: file }).first().click();
    await page.keyboard.press('Escape');
    await page.mouse.move(5, 400);
    await page.locator('.monaco-hover:visible').waitFor({ state: 'detached' }).catch(() => undefined);
}
