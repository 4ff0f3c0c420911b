import * as vscode from 'vscode';
import { onDidChangePythonInterpreter } from './python';
import { changeEffect } from './settings';

export interface Reconfigurable {
    reconsider(reason: string): Promise<void>;
    settingsChanged(): Promise<void>;
}

/**
 * What makes the server restart or re-read its settings: a new interpreter (in the Python
 * extension or gradguard.interpreter), workspace trust granted (its interpreter setting then
 * counts), or any other gradguard setting (sent to the running server, no restart). A restart
 * happens only when the server would now run elsewhere (see StartQueue.reconsider): granting
 * trust also reports the restricted settings as changed, and the server starts once.
 */
export async function watchForChanges(server: Reconfigurable): Promise<vscode.Disposable[]> {
    const subscriptions = [
        vscode.workspace.onDidChangeConfiguration((event) => {
            const effect = changeEffect(event);
            if (effect === 'restart') {
                void server.reconsider('The interpreter setting changed');
            } else if (effect === 'notify') {
                void server.settingsChanged();
            }
        }),
        vscode.workspace.onDidGrantWorkspaceTrust(() => void server.reconsider('Workspace trust granted')),
    ];
    const pythonChanged = await onDidChangePythonInterpreter(() => void server.reconsider('The Python extension selected another interpreter'));
    if (pythonChanged !== undefined) {
        subscriptions.push(pythonChanged);
    }
    return subscriptions;
}
