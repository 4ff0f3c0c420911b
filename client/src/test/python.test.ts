import { reset, state, Uri } from './vscodeMock';
import * as assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { onDidChangePythonInterpreter, resolveInterpreter } from '../common/python';

beforeEach(reset);

/** The slice of the Python extension's public API that the client uses. */
function installPythonExtension(executable: string) {
    const listeners: (() => void)[] = [];
    const asked: unknown[] = [];
    state.extensions['ms-python.python'] = {
        exports: {
            environments: {
                getActiveEnvironmentPath(resource: unknown) {
                    asked.push(resource);
                    return { id: executable, path: executable };
                },
                async resolveEnvironment(env: { path: string }) {
                    return { executable: { uri: Uri.file(env.path) } };
                },
                onDidChangeActiveEnvironmentPath(listener: () => void) {
                    listeners.push(listener);
                    return { dispose: () => listeners.splice(listeners.indexOf(listener), 1) };
                },
            },
        },
    };
    return { asked, switchInterpreter: () => listeners.forEach((l) => l()), listeners };
}

test("the Python extension's selected interpreter comes first, even over gradguard.interpreter", async () => {
    const python = installPythonExtension('/home/u/proj/.venv/bin/python');
    state.user['gradguard.interpreter'] = '/usr/bin/python3.11';
    const resource = Uri.file('/ws');
    assert.deepEqual(await resolveInterpreter(resource), { path: '/home/u/proj/.venv/bin/python', source: 'python-extension' });
    assert.deepEqual(python.asked, [resource]);
});

test('without the Python extension: gradguard.interpreter', async () => {
    state.folder['gradguard.interpreter'] = '/opt/conda/bin/python';
    assert.deepEqual(await resolveInterpreter(undefined), { path: '/opt/conda/bin/python', source: 'setting' });
});

test('neither: python3 on PATH', async () => {
    assert.deepEqual(await resolveInterpreter(undefined), { path: 'python3', source: 'default' });
});

test('in an untrusted workspace a workspace interpreter setting falls back to python3', async () => {
    state.trusted = false;
    state.workspace['gradguard.interpreter'] = '/ws/.venv/bin/python';
    assert.deepEqual(await resolveInterpreter(undefined), { path: 'python3', source: 'default' });
});

test('switching interpreter in the Python extension calls the listener (the server restarts)', async () => {
    const python = installPythonExtension('/a/bin/python');
    let restarts = 0;
    const subscription = await onDidChangePythonInterpreter(() => restarts++);
    python.switchInterpreter();
    assert.equal(restarts, 1);
    subscription?.dispose();
    python.switchInterpreter();
    assert.equal(restarts, 1);
});

test('no Python extension: nothing to listen to', async () => {
    assert.equal(await onDidChangePythonInterpreter(() => undefined), undefined);
});
