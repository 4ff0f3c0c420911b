import * as vscode from 'vscode';
import { onDidChangePythonInterpreter } from './python';
import { changeEffect } from './settings';

export interface Reconfigurable {
    restart(): Promise<void>;
    settingsChanged(): Promise<void>;
}

/**
 * What makes the server restart or re-read its settings: a new interpreter (in the Python
 * extension or gradguard.interpreter), workspace trust granted (its interpreter setting then
 * counts), or any other gradguard setting (sent to the running server, no restart).
 */
export async function watchForChanges(server: Reconfigurable): Promise<vscode.Disposable[]> {
    const subscriptions = [
        vscode.workspace.onDidChangeConfiguration((event) => {
            const effect = changeEffect(event);
            if (effect === 'restart') {
                void server.restart();
            } else if (effect === 'notify') {
                void server.settingsChanged();
            }
        }),
        vscode.workspace.onDidGrantWorkspaceTrust(() => void server.restart()),
    ];
    const pythonChanged = await onDidChangePythonInterpreter(() => void server.restart());
    if (pythonChanged !== undefined) {
        subscriptions.push(pythonChanged);
    }
    return subscriptions;
}
