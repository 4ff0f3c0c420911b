import { manifest, Range, reset, state, Uri } from './vscodeMock';
import * as assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { registerCommands } from '../common/commands';

beforeEach(reset);

function setUp() {
    const calls: string[] = [];
    const server = { restart: async (reason: string) => void calls.push(`restart: ${reason}`) };
    const output = { show: () => void calls.push('show') };
    registerCommands(server, output);
    return calls;
}

function editor(lineCount: number) {
    const uri = Uri.file('/ws/train.py');
    state.activeTextEditor = { document: { uri, lineCount } };
    return uri;
}

test('the registered commands are exactly the ones the manifest contributes', () => {
    setUp();
    assert.deepEqual(
        [...state.commands.keys()].sort(),
        manifest.contributes.commands.map((c: { command: string }) => c.command).sort(),
    );
    assert.deepEqual(
        manifest.contributes.commands.map((c: { title: string; category: string }) => `${c.category}: ${c.title}`),
        ['GradGuard: Restart Server', 'GradGuard: Fix All in File', 'GradGuard: Show Output'],
    );
});

test('Restart Server restarts, Show Output shows the channel', async () => {
    const calls = setUp();
    await state.commands.get('gradguard.restart')!();
    state.commands.get('gradguard.showOutput')!();
    assert.deepEqual(calls, ['restart: Restart Server', 'show']);
});

test("Fix All asks for source.fixAll.gradguard over the whole file and applies only that action's edit", async () => {
    setUp();
    const uri = editor(73);
    const fixAll = { title: 'GradGuard: fix all', kind: { value: 'source.fixAll.gradguard' }, edit: { id: 'fix-all-edit' } };
    const other = { title: 'Organize imports', kind: { value: 'source.organizeImports' }, edit: { id: 'other' } };
    state.executeResults['vscode.executeCodeActionProvider'] = [other, fixAll];
    assert.equal(await state.commands.get('gradguard.fixAll')!(), true);
    assert.deepEqual(state.executed, [['vscode.executeCodeActionProvider', uri, new Range(0, 0, 73, 0), 'source.fixAll.gradguard']]);
    assert.deepEqual(state.applied, [{ id: 'fix-all-edit' }]);
    assert.deepEqual(state.messages, []);
});

test('Fix All with nothing to fix says so', async () => {
    setUp();
    editor(3);
    state.executeResults['vscode.executeCodeActionProvider'] = undefined;
    assert.equal(await state.commands.get('gradguard.fixAll')!(), false);
    assert.deepEqual(state.applied, []);
    assert.deepEqual(state.messages, ['GradGuard: nothing to fix in this file.']);
});

test('Fix All without an editor says what to do', async () => {
    setUp();
    assert.equal(await state.commands.get('gradguard.fixAll')!(), false);
    assert.deepEqual(state.executed, []);
    assert.deepEqual(state.messages, ['GradGuard: open a Python file to fix.']);
});
