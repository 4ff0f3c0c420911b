import * as vscode from 'vscode';
import { registerCommands } from './common/commands';
import * as log from './common/log';
import { onDidChangePythonInterpreter } from './common/python';
import { ServerManager } from './common/server';
import { changeEffect } from './common/settings';
import { Status } from './common/status';

let manager: ServerManager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const output = log.outputChannel();
    const status = new Status();
    manager = new ServerManager(context.extensionPath, status);
    const server = manager;
    context.subscriptions.push(output, status, server, ...registerCommands(server, output));

    context.subscriptions.push(
        vscode.workspace.onDidChangeConfiguration((event) => {
            const effect = changeEffect(event);
            if (effect === 'restart') {
                void server.restart();
            } else if (effect === 'notify') {
                void server.settingsChanged();
            }
        }),
        // Trusting the workspace makes its gradguard.interpreter count.
        vscode.workspace.onDidGrantWorkspaceTrust(() => void server.restart()),
    );
    const pythonChanged = await onDidChangePythonInterpreter(() => void server.restart());
    if (pythonChanged !== undefined) {
        context.subscriptions.push(pythonChanged);
    }
    await server.restart();
}

export async function deactivate(): Promise<void> {
    await manager?.dispose();
    manager = undefined;
}
