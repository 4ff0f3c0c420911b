import { PythonExtension } from '@vscode/python-extension';
import * as vscode from 'vscode';
import { PYTHON_EXTENSION_ID } from './constants';
import { configuredInterpreter } from './settings';

export type InterpreterSource = 'python-extension' | 'setting' | 'default';

export interface Interpreter {
    path: string;
    source: InterpreterSource;
}

export const DEFAULT_INTERPRETER = 'python3';

/** The Python extension's API, or undefined when that extension is not installed. */
async function pythonApi(): Promise<PythonExtension | undefined> {
    if (vscode.extensions.getExtension(PYTHON_EXTENSION_ID) === undefined) {
        return undefined;
    }
    return PythonExtension.api();
}

/** The executable of the environment the Python extension has selected for a resource. */
async function selectedByPythonExtension(resource: vscode.Uri | undefined): Promise<string | undefined> {
    const api = await pythonApi();
    if (api === undefined) {
        return undefined;
    }
    const active = api.environments.getActiveEnvironmentPath(resource);
    const resolved = await api.environments.resolveEnvironment(active);
    return resolved?.executable.uri?.fsPath ?? (active.path || undefined);
}

/** The interpreter to run the server with: the Python extension's > gradguard.interpreter > python3. */
export async function resolveInterpreter(resource: vscode.Uri | undefined): Promise<Interpreter> {
    const selected = await selectedByPythonExtension(resource);
    if (selected !== undefined) {
        return { path: selected, source: 'python-extension' };
    }
    const configured = configuredInterpreter(resource);
    if (configured !== undefined) {
        return { path: configured, source: 'setting' };
    }
    return { path: DEFAULT_INTERPRETER, source: 'default' };
}

/** Calls `listener` when the user switches interpreter in the Python extension. */
export async function onDidChangePythonInterpreter(listener: () => void): Promise<vscode.Disposable | undefined> {
    const api = await pythonApi();
    return api?.environments.onDidChangeActiveEnvironmentPath(() => listener());
}
