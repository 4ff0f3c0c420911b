import { reset, state } from './vscodeMock';
import * as assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { watchForChanges } from '../common/watch';

beforeEach(reset);

function fakeServer() {
    const calls: string[] = [];
    return {
        calls,
        reconsider: async (reason: string) => void calls.push(`reconsider: ${reason}`),
        settingsChanged: async () => void calls.push('settingsChanged'),
    };
}

const changed = (key: string) => ({ affectsConfiguration: (s: string) => key === s || key.startsWith(s + '.') });
const fire = (key: string) => state.onConfiguration.forEach((l) => l(changed(key)));

test('a gradguard setting reaches the running server; the interpreter setting reconsiders it; others do nothing', async () => {
    const server = fakeServer();
    await watchForChanges(server);
    fire('gradguard.ignore');
    fire('gradguard.interpreter');
    fire('gradguard.trace.server');
    fire('python.analysis.typeCheckingMode');
    assert.deepEqual(server.calls, ['settingsChanged', 'reconsider: The interpreter setting changed']);
});

test('granting workspace trust reconsiders the server (the workspace interpreter setting now counts)', async () => {
    const server = fakeServer();
    await watchForChanges(server);
    state.onTrust.forEach((l) => l());
    assert.deepEqual(server.calls, ['reconsider: Workspace trust granted']);
});

test('switching interpreter in the Python extension reconsiders the server; disposing stops listening', async () => {
    const listeners: (() => void)[] = [];
    state.extensions['ms-python.python'] = {
        exports: {
            environments: {
                onDidChangeActiveEnvironmentPath(listener: () => void) {
                    listeners.push(listener);
                    return { dispose: () => listeners.splice(listeners.indexOf(listener), 1) };
                },
            },
        },
    };
    const server = fakeServer();
    const subscriptions = await watchForChanges(server);
    assert.equal(subscriptions.length, 3);
    listeners.forEach((l) => l());
    assert.deepEqual(server.calls, ['reconsider: The Python extension selected another interpreter']);
    subscriptions.forEach((s) => s.dispose());
    assert.equal(listeners.length, 0);
    assert.equal(state.onConfiguration.length, 0);
});
