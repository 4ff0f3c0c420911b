import * as vscode from 'vscode';
import { SERVER_NAME } from './constants';

// One output channel for the extension's own messages, the server's log and the trace.
let channel: vscode.LogOutputChannel | undefined;

export function outputChannel(): vscode.LogOutputChannel {
    if (channel === undefined) {
        channel = vscode.window.createOutputChannel(SERVER_NAME, { log: true });
    }
    return channel;
}

export function info(message: string): void {
    outputChannel().info(message);
}

export function error(message: string): void {
    outputChannel().error(message);
}
