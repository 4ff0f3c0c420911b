import * as vscode from 'vscode';
import { COMMANDS, FIX_ALL_KIND } from './constants';

export interface Restartable {
    restart(reason: string): Promise<void>;
}

export interface Showable {
    show(): void;
}

export function registerCommands(server: Restartable, output: Showable): vscode.Disposable[] {
    return [
        vscode.commands.registerCommand(COMMANDS.restart, () => server.restart('Restart Server')),
        vscode.commands.registerCommand(COMMANDS.fixAll, () => fixAllInActiveEditor()),
        vscode.commands.registerCommand(COMMANDS.showOutput, () => output.show()),
    ];
}

/** Runs the server's `source.fixAll.gradguard` action on the active editor; false when nothing applied. */
export async function fixAllInActiveEditor(): Promise<boolean> {
    const editor = vscode.window.activeTextEditor;
    if (editor === undefined) {
        void vscode.window.showInformationMessage('GradGuard: open a Python file to fix.');
        return false;
    }
    const document = editor.document;
    const whole = new vscode.Range(0, 0, document.lineCount, 0);
    const actions =
        (await vscode.commands.executeCommand<vscode.CodeAction[]>(
            'vscode.executeCodeActionProvider',
            document.uri,
            whole,
            FIX_ALL_KIND,
        )) ?? [];
    const ours = actions.filter((a) => a.kind?.value === FIX_ALL_KIND);
    for (const action of ours) {
        if (action.edit !== undefined) {
            await vscode.workspace.applyEdit(action.edit);
        }
        if (action.command !== undefined) {
            await vscode.commands.executeCommand(action.command.command, ...(action.command.arguments ?? []));
        }
    }
    if (ours.length === 0) {
        void vscode.window.showInformationMessage('GradGuard: nothing to fix in this file.');
    }
    return ours.length > 0;
}
