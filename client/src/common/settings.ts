import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { SECTION } from './constants';

// The keys the server reads (server/gradguard/lsp/options.py). Client-only settings
// (`interpreter` as typed, `trace.server`) are not sent: the server names unknown keys
// in a message.
export const SERVER_KEYS = ['enable', 'debounceMs', 'select', 'ignore', 'severity', 'strict', 'copyOrder', 'types', 'project'] as const;

export type ServerSettings = { [key: string]: unknown };

/** The value the user set (folder > workspace > user), or undefined when only the default applies. */
function setValue<T>(config: vscode.WorkspaceConfiguration, key: string): T | undefined {
    const inspected = config.inspect<T>(key);
    if (inspected === undefined) {
        return undefined;
    }
    return inspected.workspaceFolderValue ?? inspected.workspaceValue ?? inspected.globalValue;
}

/**
 * The `gradguard` section as the server expects it, for initializationOptions and
 * workspace/configuration. Unset keys are null ("not set"), so the project's own
 * settings still apply on the server; `interpreter` is the resolved path.
 */
export function serverSettings(resource: vscode.Uri | undefined, interpreter: string): ServerSettings {
    const config = vscode.workspace.getConfiguration(SECTION, resource);
    const out: ServerSettings = {};
    for (const key of SERVER_KEYS) {
        let value = setValue<unknown>(config, key);
        // An empty select means "all rules" in the settings UI; to the engine it would mean none.
        if (key === 'select' && Array.isArray(value) && value.length === 0) {
            value = undefined;
        }
        // The type layer is an editor feature, on by default in VS Code (the manifest says so),
        // while the server and the CLI default it off: send the effective value.
        if (key === 'types' && value === undefined) {
            value = config.get<boolean>('types') ?? true;
        }
        out[key] = value ?? null;
    }
    out.interpreter = interpreter;
    return out;
}

/** Whether the jedi type layer is on for a resource: the setting, else the manifest's default (on). */
export function typesOn(resource: vscode.Uri | undefined): boolean {
    return vscode.workspace.getConfiguration(SECTION, resource).get<boolean>('types') ?? true;
}

/**
 * `gradguard.interpreter`, with `${workspaceFolder}` and `~` expanded; undefined when empty.
 * In an untrusted workspace only the user's own value counts: a workspace could otherwise
 * name any program to run.
 */
export function configuredInterpreter(resource: vscode.Uri | undefined): string | undefined {
    const config = vscode.workspace.getConfiguration(SECTION, resource);
    const raw = vscode.workspace.isTrusted
        ? config.get<string>('interpreter')
        : config.inspect<string>('interpreter')?.globalValue;
    if (typeof raw !== 'string' || raw.trim() === '') {
        return undefined;
    }
    const folder = workspaceFolderFor(resource);
    let value = raw.trim();
    if (folder !== undefined) {
        value = value.replace(/\$\{workspaceFolder\}/g, folder);
    }
    if (value === '~' || value.startsWith('~/')) {
        value = path.join(os.homedir(), value.slice(1));
    }
    return value;
}

function workspaceFolderFor(resource: vscode.Uri | undefined): string | undefined {
    const folder = resource !== undefined ? vscode.workspace.getWorkspaceFolder(resource) : undefined;
    return (folder ?? vscode.workspace.workspaceFolders?.[0])?.uri.fsPath;
}

/** The resource whose settings the (single, workspace-wide) server runs with. */
export function primaryResource(): vscode.Uri | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri;
}

/** What a configuration change means for the server: restart it, tell it, or nothing. */
export function changeEffect(event: vscode.ConfigurationChangeEvent): 'restart' | 'notify' | 'none' {
    if (event.affectsConfiguration(`${SECTION}.interpreter`)) {
        return 'restart';
    }
    // trace.server is applied by the language client itself.
    const serverKeyChanged = SERVER_KEYS.some((key) => event.affectsConfiguration(`${SECTION}.${key}`));
    return serverKeyChanged ? 'notify' : 'none';
}

interface ConfigurationItem {
    scopeUri?: string;
    section?: string;
}

type ConfigurationNext = (params: { items: ConfigurationItem[] }, token: vscode.CancellationToken) => unknown;

/**
 * The language client's `workspace.configuration` middleware: the server's requests for
 * `gradguard` get `serverSettings` (the keys it reads and the resolved interpreter), not
 * the raw section with its client-only keys; other sections go to the default handler.
 */
export function configurationMiddleware(interpreter: string) {
    return async (params: { items: ConfigurationItem[] }, token: vscode.CancellationToken, next: ConfigurationNext): Promise<any> => {
        const others = params.items.some((item) => item.section !== SECTION) ? await next(params, token) : [];
        if (!Array.isArray(others)) {
            return others; // a ResponseError from the default handler
        }
        return params.items.map((item, i) =>
            item.section === SECTION
                ? serverSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : primaryResource(), interpreter)
                : others[i],
        );
    };
}
