// A stand-in for the `vscode` module, installed before the code under test loads it.
// Settings defaults come from the real manifest, so tests also check package.json.
import * as fs from 'node:fs';
import * as path from 'node:path';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Module = require('node:module');

export const ROOT = path.resolve(__dirname, '..', '..');
export const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const properties: Record<string, { default?: unknown }> = manifest.contributes.configuration.properties;

export class Uri {
    private constructor(
        readonly scheme: string,
        readonly fsPath: string,
    ) {}
    // `any`: tests pass these where the code expects vscode.Uri.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    static file(p: string): any {
        return new Uri('file', p);
    }
    static parse(s: string): Uri {
        return s.startsWith('file://') ? new Uri('file', s.slice('file://'.length)) : new Uri('untitled', s);
    }
    toString(): string {
        return `${this.scheme}://${this.fsPath}`;
    }
    toJSON(): object {
        return { $mid: 1, scheme: this.scheme, path: this.fsPath };
    }
}

export class MarkdownString {
    isTrusted: boolean | { enabledCommands: string[] } = false;
    constructor(readonly value: string) {}
}

export class Hover {
    constructor(
        readonly contents: unknown[],
        readonly range?: unknown,
    ) {}
}

export class Range {
    constructor(
        readonly startLine: number,
        readonly startCharacter: number,
        readonly endLine: number,
        readonly endCharacter: number,
    ) {}
}

type Layer = Record<string, unknown>;

export interface Listener<T> {
    (e: T): void;
}

/** Everything a test sets up or inspects. */
export const state = {
    user: {} as Layer,
    workspace: {} as Layer,
    folder: {} as Layer,
    trusted: true,
    folders: [Uri.file('/ws')] as Uri[],
    extensions: {} as Record<string, { exports: unknown }>,
    commands: new Map<string, (...args: unknown[]) => unknown>(),
    executed: [] as unknown[][],
    executeResults: {} as Record<string, unknown>,
    applied: [] as unknown[],
    messages: [] as string[],
    activeTextEditor: undefined as unknown,
    onConfiguration: [] as Listener<unknown>[],
    onTrust: [] as Listener<void>[],
    logged: [] as string[],
    statusItems: [] as { text: string; detail: string; busy: boolean; severity: number }[],
};

export function reset(): void {
    state.user = {};
    state.workspace = {};
    state.folder = {};
    state.trusted = true;
    state.folders = [Uri.file('/ws')];
    state.extensions = {};
    state.commands.clear();
    state.executed = [];
    state.executeResults = {};
    state.applied = [];
    state.messages = [];
    state.activeTextEditor = undefined;
    state.onConfiguration = [];
    state.onTrust = [];
    state.logged = [];
    state.statusItems = [];
}

function subscribe<T>(listeners: Listener<T>[], listener: Listener<T>) {
    listeners.push(listener);
    return { dispose: () => listeners.splice(listeners.indexOf(listener), 1) };
}

function configuration(section: string) {
    const full = (key: string) => `${section}.${key}`;
    return {
        inspect(key: string) {
            const k = full(key);
            return {
                key: k,
                defaultValue: properties[k]?.default,
                globalValue: state.user[k],
                workspaceValue: state.workspace[k],
                workspaceFolderValue: state.folder[k],
            };
        },
        get(key: string, fallback?: unknown) {
            const k = full(key);
            // What VS Code does for a restricted setting in an untrusted workspace.
            const restricted = !state.trusted && manifest.capabilities.untrustedWorkspaces.restrictedConfigurations.includes(k);
            const set = restricted ? state.user[k] : (state.folder[k] ?? state.workspace[k] ?? state.user[k]);
            return set ?? properties[k]?.default ?? fallback;
        },
    };
}

export const vscode = {
    Uri,
    Range,
    MarkdownString,
    Hover,
    LanguageStatusSeverity: { Information: 0, Warning: 1, Error: 2 },
    workspace: {
        getConfiguration: (section: string) => configuration(section),
        get isTrusted() {
            return state.trusted;
        },
        get workspaceFolders() {
            return state.folders.map((uri, index) => ({ uri, index, name: path.basename(uri.fsPath) }));
        },
        getWorkspaceFolder(uri: Uri) {
            return vscode.workspace.workspaceFolders.find((f) => uri.fsPath.startsWith(f.uri.fsPath + '/'));
        },
        onDidChangeConfiguration: (listener: Listener<unknown>) => subscribe(state.onConfiguration, listener),
        onDidGrantWorkspaceTrust: (listener: Listener<void>) => subscribe(state.onTrust, listener),
        async applyEdit(edit: unknown) {
            state.applied.push(edit);
            return true;
        },
    },
    extensions: {
        getExtension: (id: string) =>
            state.extensions[id] === undefined
                ? undefined
                : { id, isActive: true, exports: state.extensions[id].exports, activate: async () => state.extensions[id].exports },
    },
    commands: {
        registerCommand(id: string, handler: (...args: unknown[]) => unknown) {
            state.commands.set(id, handler);
            return { dispose: () => state.commands.delete(id) };
        },
        async executeCommand(id: string, ...args: unknown[]) {
            state.executed.push([id, ...args]);
            return state.executeResults[id];
        },
    },
    languages: {
        createLanguageStatusItem(id: string, selector: unknown) {
            const item = { id, selector, name: '', text: '', detail: '', busy: false, severity: 0, command: undefined, dispose() {} };
            state.statusItems.push(item);
            return item;
        },
    },
    window: {
        get activeTextEditor() {
            return state.activeTextEditor;
        },
        async showInformationMessage(message: string) {
            state.messages.push(message);
            return undefined;
        },
        createOutputChannel(name: string) {
            const line = (text: string) => void state.logged.push(text);
            return { name, info: line, warn: line, error: line, appendLine: line, show() {}, dispose() {} };
        },
    },
};

const originalLoad = Module._load;
Module._load = function (request: string, ...rest: unknown[]) {
    return request === 'vscode' ? vscode : originalLoad.call(this, request, ...rest);
};
