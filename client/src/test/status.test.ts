import { reset, state } from './vscodeMock';
import * as assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { Status } from '../common/status';

beforeEach(reset);

test('the status item says whether the type layer is on once the server runs, and the interpreter', () => {
    const status = new Status();
    const [item] = state.statusItems;
    assert.equal(item.text, 'GradGuard: starting');
    assert.equal(item.busy, true);
    status.set('running', '/ws/.venv/bin/python', false, true);
    assert.deepEqual([item.text, item.detail, item.busy], ['GradGuard: running · types on', '/ws/.venv/bin/python', false]);
    status.set('running', '/ws/.venv/bin/python', false, false);
    assert.equal(item.text, 'GradGuard: running · types off');
    status.set('not installed', 'python3', true);
    assert.deepEqual([item.text, item.severity], ['GradGuard: not installed', 2]);
});
