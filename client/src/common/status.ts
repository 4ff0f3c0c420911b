import * as vscode from 'vscode';
import { COMMANDS } from './constants';

/** The language status item: the server's state and the interpreter it runs in. */
export class Status implements vscode.Disposable {
    private readonly item: vscode.LanguageStatusItem;

    constructor() {
        this.item = vscode.languages.createLanguageStatusItem('gradguard.status', { language: 'python' });
        this.item.name = 'GradGuard';
        this.item.command = { title: 'Show Output', command: COMMANDS.showOutput };
        this.set('starting', '');
    }

    /** `types`: whether the jedi type layer is on (shown once the server runs). */
    set(state: string, interpreter: string, problem = false, types?: boolean): void {
        this.item.text = `GradGuard: ${state}` + (types === undefined ? '' : ` · types ${types ? 'on' : 'off'}`);
        this.item.detail = interpreter;
        this.item.busy = state === 'starting' || state === 'checking';
        this.item.severity = problem ? vscode.LanguageStatusSeverity.Error : vscode.LanguageStatusSeverity.Information;
    }

    get text(): string {
        return this.item.text;
    }

    dispose(): void {
        this.item.dispose();
    }
}
