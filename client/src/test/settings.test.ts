import { manifest, reset, state, Uri } from './vscodeMock';
import * as assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { changeEffect, configuredInterpreter, configurationMiddleware, SERVER_KEYS, serverSettings } from '../common/settings';

beforeEach(reset);

// Unset keys are null (the project decides), except `types`: the manifest's default (on) is sent.
const UNSET = { enable: null, debounceMs: null, select: null, ignore: null, severity: null, strict: null, copyOrder: null, types: true, project: null };

test('nothing set: every server key is null (the project decides) but types, on as the manifest says; the resolved interpreter is sent', () => {
    assert.deepEqual(serverSettings(undefined, '/usr/bin/python3'), { ...UNSET, interpreter: '/usr/bin/python3' });
});

test('folder beats workspace beats user; client-only keys are never sent', () => {
    state.user['gradguard.ignore'] = ['GG5'];
    state.user['gradguard.debounceMs'] = 100;
    state.workspace['gradguard.debounceMs'] = 200;
    state.folder['gradguard.severity'] = { GG202: 'warning' };
    state.workspace['gradguard.copyOrder'] = 'detach-clone';
    state.user['gradguard.trace.server'] = 'verbose';
    state.user['gradguard.interpreter'] = '/opt/py/bin/python';
    assert.deepEqual(serverSettings(Uri.file('/ws/a.py'), '/env/bin/python'), {
        ...UNSET,
        ignore: ['GG5'],
        debounceMs: 200,
        severity: { GG202: 'warning' },
        copyOrder: 'detach-clone',
        interpreter: '/env/bin/python',
    });
});

test('an empty select means all rules, so it is not sent (the engine would select none)', () => {
    state.user['gradguard.select'] = [];
    assert.equal(serverSettings(undefined, 'python3').select, null);
    state.user['gradguard.select'] = ['GG1'];
    assert.deepEqual(serverSettings(undefined, 'python3').select, ['GG1']);
});

test('gradguard.interpreter expands ${workspaceFolder}; empty is unset', () => {
    assert.equal(configuredInterpreter(undefined), undefined);
    state.workspace['gradguard.interpreter'] = '  ';
    assert.equal(configuredInterpreter(undefined), undefined);
    state.workspace['gradguard.interpreter'] = '${workspaceFolder}/.venv/bin/python';
    assert.equal(configuredInterpreter(Uri.file('/ws/train.py')), '/ws/.venv/bin/python');
});

test('an untrusted workspace cannot choose the interpreter; the user still can', () => {
    state.trusted = false;
    state.workspace['gradguard.interpreter'] = '/ws/evil';
    assert.equal(configuredInterpreter(undefined), undefined);
    state.user['gradguard.interpreter'] = '/usr/local/bin/python3.12';
    assert.equal(configuredInterpreter(undefined), '/usr/local/bin/python3.12');
});

test('a change of interpreter restarts the server, of a server key notifies it, of trace.server neither', () => {
    const changed = (...keys: string[]) => ({ affectsConfiguration: (s: string) => keys.some((k) => k === s || k.startsWith(s + '.')) });
    assert.equal(changeEffect(changed('gradguard.interpreter')), 'restart');
    for (const key of SERVER_KEYS) {
        assert.equal(changeEffect(changed(`gradguard.${key}`)), 'notify', key);
    }
    assert.equal(changeEffect(changed('gradguard.trace.server')), 'none');
    assert.equal(changeEffect(changed('editor.fontSize')), 'none');
});

test('workspace/configuration: gradguard gets the server settings, other sections the default handler', async () => {
    state.user['gradguard.strict'] = true;
    state.user['gradguard.trace.server'] = 'messages';
    const middleware = configurationMiddleware('/env/bin/python');
    const asked: unknown[] = [];
    const next = async (params: { items: { section?: string }[] }) => {
        asked.push(params.items.map((i) => i.section));
        return params.items.map((i) => `default for ${i.section}`);
    };
    const token = {} as never;
    assert.deepEqual(await middleware({ items: [{ section: 'gradguard' }] }, token, next), [
        { ...UNSET, strict: true, interpreter: '/env/bin/python' },
    ]);
    assert.deepEqual(asked, []);
    assert.deepEqual(await middleware({ items: [{ section: 'python' }, { section: 'gradguard' }] }, token, next), [
        'default for python',
        { ...UNSET, strict: true, interpreter: '/env/bin/python' },
    ]);
});

test('the manifest contributes exactly the server keys plus interpreter and trace.server, each described, resource-scoped where it makes sense', () => {
    const properties = manifest.contributes.configuration.properties;
    assert.deepEqual(
        Object.keys(properties).sort(),
        [...SERVER_KEYS, 'interpreter', 'trace.server'].map((k) => `gradguard.${k}`).sort(),
    );
    for (const [key, schema] of Object.entries<{ description?: string; default?: unknown; scope?: string }>(properties)) {
        assert.ok(schema.description, `${key} has a description`);
        assert.notEqual(schema.default, undefined, `${key} has a default`);
        assert.equal(schema.scope, key === 'gradguard.trace.server' ? 'window' : 'resource', key);
    }
    assert.deepEqual(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations, ['gradguard.interpreter']);
    assert.equal(manifest.capabilities.untrustedWorkspaces.supported, 'limited');
    // The server's levels (gradguard.findings.Severity).
    assert.deepEqual(properties['gradguard.severity'].additionalProperties.enum, ['error', 'warning', 'info']);
});
