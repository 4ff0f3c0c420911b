import * as vscode from 'vscode';
import * as log from './log';

/** What the status item needs (the Status class, or a test's stand-in). */
export interface StatusLike {
    set(state: string, interpreter: string, problem?: boolean, types?: boolean): void;
}

/**
 * In Restricted Mode GradGuard does nothing but say it waits: no interpreter is resolved or
 * run, nothing is installed; granting trust starts the server (see watch.ts).
 */
export function waitingForTrust(status: StatusLike): boolean {
    if (vscode.workspace.isTrusted) {
        return false;
    }
    status.set('waiting for workspace trust', 'GradGuard runs a Python interpreter: it starts once the folder is trusted');
    log.info('Restricted Mode: GradGuard waits for workspace trust before it starts a server.');
    return true;
}
