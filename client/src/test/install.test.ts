// Real processes: a missing interpreter, one without gradguard, the repo's venv, and a
// stand-in for pip that records its arguments or fails like pip does.
import { ROOT } from './vscodeMock';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { bundledWheel, checkGradGuard, createOwnEnvironment, installWheel, ownEnvironment, wheelVersion } from '../common/install';

const venvPython = path.join(ROOT, '.venv', 'bin', 'python');

function fakeInterpreter(script: string): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gg-fake-python-'));
    const exe = path.join(dir, 'python');
    fs.writeFileSync(exe, `#!/bin/sh\n${script}\n`, { mode: 0o755 });
    return exe;
}

test('an interpreter that does not exist', async () => {
    assert.deepEqual(await checkGradGuard('/nonexistent/bin/python'), {
        status: 'no-interpreter',
        detail: '/nonexistent/bin/python: not found',
    });
});

test('an interpreter without gradguard: the import error is kept for the output channel', async () => {
    const python = fakeInterpreter(`echo "ModuleNotFoundError: No module named 'gradguard'" >&2; exit 1`);
    assert.deepEqual(await checkGradGuard(python), {
        status: 'not-installed',
        detail: "ModuleNotFoundError: No module named 'gradguard'",
    });
});

test("the repo's venv has gradguard, with its version", { skip: !fs.existsSync(venvPython) }, async () => {
    const init = fs.readFileSync(path.join(ROOT, 'server', 'gradguard', '__init__.py'), 'utf8');
    const version = /__version__\s*=\s*"([^"]+)"/.exec(init)![1];
    assert.deepEqual(await checkGradGuard(venvPython), { status: 'ok', version, executable: venvPython });
});

test('a bare command name resolves to the absolute path the server is told about', async () => {
    const dir = path.dirname(fakeInterpreter(''));
    fs.writeFileSync(path.join(dir, 'python'), `#!/bin/sh\necho 0.1.0; echo ${dir}/python\n`, { mode: 0o755 });
    const env = process.env.PATH;
    process.env.PATH = `${dir}:${env}`;
    try {
        assert.deepEqual(await checkGradGuard('python'), { status: 'ok', version: '0.1.0', executable: `${dir}/python` });
    } finally {
        process.env.PATH = env;
    }
});

test('install runs the interpreter\'s pip on the wheel', async () => {
    const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gg-args-')), 'args');
    const python = fakeInterpreter(`printf '%s\\n' "$@" > ${log}; echo "Successfully installed gradguard-0.1.0"`);
    const result = await installWheel(python, '/ext/bundled/gradguard-0.1.0-py3-none-any.whl');
    assert.deepEqual(result, { ok: true, output: 'Successfully installed gradguard-0.1.0' });
    assert.deepEqual(fs.readFileSync(log, 'utf8').trim().split('\n'), [
        '-m',
        'pip',
        'install',
        '--disable-pip-version-check',
        '/ext/bundled/gradguard-0.1.0-py3-none-any.whl',
    ]);
});

test("a failed install reports pip's own message", async () => {
    const python = fakeInterpreter(
        `echo "ERROR: Could not find a version that satisfies the requirement libcst<1.10,>=1.9" >&2; exit 1`,
    );
    assert.deepEqual(await installWheel(python, '/w.whl'), {
        ok: false,
        output: 'ERROR: Could not find a version that satisfies the requirement libcst<1.10,>=1.9',
    });
});

test("the carried wheel's version, to update the extension's environment after an update of the extension", () => {
    assert.equal(wheelVersion('/ext/bundled/gradguard-0.2.0-py3-none-any.whl'), '0.2.0');
    assert.equal(wheelVersion('/ext/bundled/other-1.0-py3-none-any.whl'), undefined);
});

test('the bundled wheel is found in the extension folder', () => {
    const ext = fs.mkdtempSync(path.join(os.tmpdir(), 'gg-ext-'));
    assert.equal(bundledWheel(ext), undefined);
    fs.mkdirSync(path.join(ext, 'bundled'));
    fs.writeFileSync(path.join(ext, 'bundled', 'gradguard-0.1.0-py3-none-any.whl'), '');
    assert.equal(bundledWheel(ext), path.join(ext, 'bundled', 'gradguard-0.1.0-py3-none-any.whl'));
});

test("the extension's own environment: a venv made with the user's interpreter, the wheel installed into it", async () => {
    const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'gg-storage-'));
    const own = ownEnvironment(storage);
    assert.deepEqual(own, { dir: path.join(storage, 'env'), python: path.join(storage, 'env', 'bin', 'python') });
    // The base interpreter's `-m venv DIR` makes a python there that records what pip is asked.
    const log = path.join(storage, 'pip-args');
    const base = fakeInterpreter(
        `mkdir -p "$4/bin" && printf '#!/bin/sh\\nprintf "%%s\\\\n" "$@" > ${log}; echo "Successfully installed gradguard-0.1.0"\\n' > "$4/bin/python" && chmod +x "$4/bin/python"`,
    );
    const result = await createOwnEnvironment(base, own.dir, own.python, '/ext/bundled/gradguard-0.1.0-py3-none-any.whl');
    assert.equal(result.ok, true, result.output);
    assert.match(result.output, /-m venv --clear .*\/env\n\$ .*\/env\/bin\/python -m pip install \/ext\/bundled\/gradguard-0.1.0-py3-none-any.whl\nSuccessfully installed gradguard-0.1.0/);
    assert.deepEqual(fs.readFileSync(log, 'utf8').trim().split('\n'), [
        '-m', 'pip', 'install', '--disable-pip-version-check', '/ext/bundled/gradguard-0.1.0-py3-none-any.whl',
    ]);
});

test("an interpreter that cannot make a venv: nothing is installed, venv's message kept", async () => {
    const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'gg-storage-'));
    const own = ownEnvironment(storage);
    const base = fakeInterpreter(`echo "The virtual environment was not created successfully because ensurepip is not available." >&2; exit 1`);
    const result = await createOwnEnvironment(base, own.dir, own.python, '/w.whl');
    assert.equal(result.ok, false);
    assert.match(result.output, /ensurepip is not available/);
    assert.equal(fs.existsSync(own.python), false);
});
