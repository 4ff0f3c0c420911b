import * as vscode from 'vscode';
import { registerCommands } from './common/commands';
import * as log from './common/log';
import { ServerManager } from './common/server';
import { Status } from './common/status';
import { watchForChanges } from './common/watch';

let manager: ServerManager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const output = log.outputChannel();
    const status = new Status();
    const server = new ServerManager(context.extensionPath, status, context.globalStorageUri.fsPath);
    manager = server;
    context.subscriptions.push(output, status, server, ...registerCommands(server, output));
    context.subscriptions.push(...(await watchForChanges(server)));
    await server.restart('Activated');
}

export async function deactivate(): Promise<void> {
    await manager?.dispose();
    manager = undefined;
}
