import { reset, state } from './vscodeMock';
import * as assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { waitingForTrust } from '../common/trust';

beforeEach(reset);

function recorder() {
    const calls: unknown[][] = [];
    return { calls, set: (...args: unknown[]) => void calls.push(args) };
}

test('in Restricted Mode GradGuard only says it waits for trust', () => {
    state.trusted = false;
    const status = recorder();
    assert.equal(waitingForTrust(status), true);
    assert.deepEqual(status.calls, [
        ['waiting for workspace trust', 'GradGuard runs a Python interpreter: it starts once the folder is trusted'],
    ]);
    assert.deepEqual(state.messages, []); // no notification, no install offer
    assert.deepEqual(state.logged, ['Restricted Mode: GradGuard waits for workspace trust before it starts a server.']);
});

test('in a trusted folder it goes on', () => {
    const status = recorder();
    assert.equal(waitingForTrust(status), false);
    assert.deepEqual(status.calls, []);
});
