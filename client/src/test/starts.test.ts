import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { errorText, StartQueue } from '../common/starts';

/** A server whose starts and stops are recorded; `choice` is the interpreter a start picks now. */
function fakeServer(choice: { now: string | undefined }) {
    const calls: string[] = [];
    return {
        calls,
        server: {
            start: async (reason: string) => {
                calls.push(`start (${reason})`);
                await new Promise((r) => setTimeout(r, 5)); // a start takes a while
                return choice.now;
            },
            stop: async () => void calls.push('stop'),
            wouldChoose: async () => choice.now ?? 'python3',
            failed: (e: unknown) => void calls.push(`failed: ${errorText(e)}`),
            skipped: (reason: string, interpreter: string) => void calls.push(`skipped (${reason}): ${interpreter}`),
        },
    };
}

test('granting trust starts the server once, although the interpreter setting is reported changed too', async () => {
    const choice = { now: undefined as string | undefined }; // Restricted Mode: the start does not try
    const { calls, server } = fakeServer(choice);
    const queue = new StartQueue(server);
    await queue.restart('Activated');
    choice.now = '/ws/.venv/bin/python'; // trusted: the workspace's setting counts
    await Promise.all([queue.reconsider('Workspace trust granted'), queue.reconsider('The interpreter setting changed')]);
    assert.deepEqual(calls, [
        'stop',
        'start (Activated)',
        'stop',
        'start (Workspace trust granted)',
        'skipped (The interpreter setting changed): /ws/.venv/bin/python',
    ]);
});

test('another interpreter restarts; the same one does not; the Restart command always does', async () => {
    const choice = { now: '/a/bin/python' as string | undefined };
    const { calls, server } = fakeServer(choice);
    const queue = new StartQueue(server);
    await queue.restart('Activated');
    await queue.reconsider('The Python extension selected another interpreter');
    choice.now = '/b/bin/python';
    await queue.reconsider('The Python extension selected another interpreter');
    await queue.restart('Restart Server');
    assert.deepEqual(calls, [
        'stop',
        'start (Activated)',
        'skipped (The Python extension selected another interpreter): /a/bin/python',
        'stop',
        'start (The Python extension selected another interpreter)',
        'stop',
        'start (Restart Server)',
    ]);
});

test('a failed start is reported in words and the next change starts again', async () => {
    const calls: string[] = [];
    let fail = true;
    const queue = new StartQueue({
        start: async () => {
            if (fail) {
                throw { code: -32603, message: 'Server initialization failed.' }; // a ResponseError-like object
            }
            calls.push('start');
            return '/a/bin/python';
        },
        stop: async () => undefined,
        wouldChoose: async () => '/a/bin/python',
        failed: (e) => void calls.push(`failed: ${errorText(e)}`),
        skipped: () => void calls.push('skipped'),
    });
    await queue.restart('Activated');
    fail = false;
    await queue.reconsider('Workspace trust granted');
    assert.deepEqual(calls, ['failed: Server initialization failed.', 'start']);
});

test('errors never read [object Object]', () => {
    assert.equal(errorText(new Error('boom')), 'boom');
    assert.equal(errorText('plain'), 'plain');
    assert.equal(errorText({ code: 1 }), '{"code":1}');
    assert.equal(errorText(undefined), 'undefined');
});
