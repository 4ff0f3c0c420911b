import * as fs from 'node:fs';
import * as vscode from 'vscode';
import {
    DidChangeConfigurationNotification,
    LanguageClient,
    LanguageClientOptions,
    RevealOutputChannelOn,
    ServerOptions,
    State,
} from 'vscode-languageclient/node';
import { EXTENSION_ID, SECTION, SERVER_NAME } from './constants';
import { bundledWheel, checkGradGuard, createOwnEnvironment, installWheel, ownEnvironment, wheelVersion } from './install';
import * as log from './log';
import { Interpreter, resolveInterpreter } from './python';
import { plainCodes, previewRuleLinks } from './hover';
import { configurationMiddleware, primaryResource, serverSettings, typesOn } from './settings';
import { errorText, StartQueue } from './starts';
import { Status } from './status';
import { waitingForTrust } from './trust';

// Python files and the Python cells of Jupyter notebooks (the server syncs whole notebooks).
export const DOCUMENT_SELECTOR = [
    { scheme: 'file', language: 'python' },
    { scheme: 'untitled', language: 'python' },
    { notebook: 'jupyter-notebook', language: 'python' },
];

/** Starts, restarts and stops `<interpreter> -m gradguard lsp`; one start or stop at a time (StartQueue). */
export class ServerManager implements vscode.Disposable {
    private client: LanguageClient | undefined;
    private readonly starts: StartQueue;
    interpreter: Interpreter | undefined;

    constructor(
        private readonly extensionPath: string,
        private readonly status: Status,
        private readonly storagePath: string, // the extension's global storage: its own environment lives there
    ) {
        this.starts = new StartQueue({
            start: (reason) => this.start(reason),
            stop: () => this.stopClient(),
            wouldChoose: async () => (await resolveInterpreter(primaryResource())).path,
            failed: (e) => this.failed(e),
            skipped: (reason, interpreter) => log.info(`${reason}: the server goes on with ${interpreter}`),
        });
    }

    /** Stop and start again (the Restart command, a finished install). */
    restart(reason = 'Restart'): Promise<void> {
        return this.starts.restart(reason);
    }

    /** Trust or the interpreter changed: start again only if the server would run elsewhere now. */
    reconsider(reason: string): Promise<void> {
        return this.starts.reconsider(reason);
    }

    /** Settings changed that the running server can take without a restart. */
    async settingsChanged(): Promise<void> {
        if (this.client?.isRunning()) {
            this.status.set('running', this.interpreter?.path ?? '', false, typesOn(primaryResource()));
            await this.client.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
        }
    }

    async dispose(): Promise<void> {
        await this.starts.stop();
    }

    /** Starts the server; returns the interpreter it chose (undefined: waiting for trust). */
    private async start(reason: string): Promise<string | undefined> {
        if (waitingForTrust(this.status)) {
            return undefined;
        }
        const resource = primaryResource();
        const interpreter = await resolveInterpreter(resource);
        this.interpreter = interpreter;
        log.info(`${reason}: starting with ${interpreter.path} (${describeSource(interpreter)})`);
        this.status.set('checking', interpreter.path);

        let check = await checkGradGuard(interpreter.path);
        if (check.status === 'no-interpreter') {
            log.error(`Cannot run the server: ${check.detail}`);
            this.status.set('no interpreter', interpreter.path, true);
            void this.reportMissingInterpreter(interpreter.path);
            return interpreter.path;
        }
        // Installed in the project's interpreter: run there. Else the extension's own environment,
        // where the server runs while jedi still reads the project's interpreter (its torch).
        let command = interpreter.path;
        let executable = check.status === 'ok' ? check.executable : interpreter.path; // what jedi reads
        if (check.status === 'not-installed') {
            const own = ownEnvironment(this.storagePath);
            let ownCheck = fs.existsSync(own.python) ? await checkGradGuard(own.python) : undefined;
            if (ownCheck?.status === 'ok' && (await this.updateOwnEnvironment(own, ownCheck.version))) {
                ownCheck = await checkGradGuard(own.python);
            }
            if (ownCheck?.status !== 'ok') {
                log.error(`gradguard is not importable in ${interpreter.path}:\n${check.detail}`);
                this.status.set('not installed', interpreter.path, true);
                void this.offerInstall(interpreter.path);
                return interpreter.path;
            }
            check = ownCheck;
            command = own.python;
            log.info(`GradGuard ${check.version} in the extension's environment ${own.dir}; types read ${interpreter.path}`);
        } else {
            log.info(`GradGuard ${check.version} in ${interpreter.path}`);
        }

        const serverOptions: ServerOptions = {
            command,
            args: ['-m', 'gradguard', 'lsp'],
            options: { cwd: resource?.fsPath, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
        };
        const clientOptions: LanguageClientOptions = {
            documentSelector: DOCUMENT_SELECTOR,
            outputChannel: log.outputChannel(),
            traceOutputChannel: log.outputChannel(),
            revealOutputChannelOn: RevealOutputChannelOn.Never,
            initializationOptions: serverSettings(resource, executable),
            middleware: {
                workspace: { configuration: configurationMiddleware(executable) },
                provideHover: async (document, position, token, next) => previewRuleLinks(await next(document, position, token)),
                handleDiagnostics: (uri, diagnostics, next) => next(uri, plainCodes(diagnostics)),
            },
        };
        const client = new LanguageClient(EXTENSION_ID, SERVER_NAME, serverOptions, clientOptions);
        client.onDidChangeState((e) => {
            if (e.newState === State.Running) {
                this.status.set('running', interpreter.path, false, typesOn(resource));
            } else if (e.newState === State.Stopped) {
                this.status.set('stopped', interpreter.path, true);
            }
        });
        this.client = client;
        this.status.set('starting', interpreter.path);
        await client.start();
        return interpreter.path;
    }

    private async stopClient(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        if (client !== undefined) {
            await client.stop().catch((e) => log.error(`Stopping the server: ${errorText(e)}`));
            await client.dispose();
        }
    }

    private failed(e: unknown): void {
        log.error(`The server did not start: ${errorText(e)}`);
        this.status.set('failed', this.interpreter?.path ?? '', true);
        void vscode.window
            .showErrorMessage(`GradGuard: the server did not start (${errorText(e)}).`, 'Show Output')
            .then((choice) => choice && log.outputChannel().show());
    }

    private async reportMissingInterpreter(interpreter: string): Promise<void> {
        const choice = await vscode.window.showErrorMessage(
            `GradGuard: the Python interpreter "${interpreter}" was not found. Select one in the Python extension or set gradguard.interpreter.`,
            'Open Settings',
            'Show Output',
        );
        if (choice === 'Open Settings') {
            await vscode.commands.executeCommand('workbench.action.openSettings', `${SECTION}.interpreter`);
        } else if (choice === 'Show Output') {
            log.outputChannel().show();
        }
    }

    /**
     * The extension's own environment holds an older GradGuard than the wheel this copy of the
     * extension carries (the extension was updated): install the carried one there. True if it ran.
     */
    private async updateOwnEnvironment(own: { dir: string; python: string }, installed: string): Promise<boolean> {
        const wheel = bundledWheel(this.extensionPath);
        const carried = wheel === undefined ? undefined : wheelVersion(wheel);
        if (wheel === undefined || carried === undefined || carried === installed) {
            return false;
        }
        log.info(`Updating GradGuard ${installed} to ${carried} in the extension's environment ${own.dir}`);
        const result = await vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: `Updating GradGuard to ${carried} in ${own.dir}` },
            () => installWheel(own.python, wheel),
        );
        (result.ok ? log.info : log.error)(result.output);
        return true;
    }

    private async offerInstall(interpreter: string): Promise<void> {
        const wheel = bundledWheel(this.extensionPath);
        if (wheel === undefined) {
            await vscode.window.showErrorMessage(
                `GradGuard is not installed in ${interpreter}, and this copy of the extension carries no wheel: run "${interpreter} -m pip install gradguard".`,
            );
            return;
        }
        const own = ownEnvironment(this.storagePath);
        const install = 'Install GradGuard';
        const intoProject = 'Install into this interpreter';
        const choice = await vscode.window.showWarningMessage(
            `GradGuard is not installed in ${interpreter}. Install it in an environment of its own (${own.dir}, made with ` +
                `this interpreter; dependencies from the package index)? Your interpreter stays as it is.`,
            install,
            intoProject,
        );
        if (choice !== install && choice !== intoProject) {
            return;
        }
        const where = choice === install ? own.dir : interpreter;
        log.info(choice === install ? `Creating ${own.dir} with ${interpreter} and installing ${wheel}` : `Running ${interpreter} -m pip install ${wheel}`);
        const result = await vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: `Installing GradGuard in ${where}` },
            () => (choice === install ? createOwnEnvironment(interpreter, own.dir, own.python, wheel) : installWheel(interpreter, wheel)),
        );
        if (result.ok) {
            log.info(result.output);
            await this.restart(`Installed in ${where}`);
            return;
        }
        log.error(`Installing GradGuard failed:\n${result.output}`);
        const show = await vscode.window.showErrorMessage(`GradGuard: could not install GradGuard in ${where}.`, 'Show Output');
        if (show) {
            log.outputChannel().show();
        }
    }
}

function describeSource(interpreter: Interpreter): string {
    switch (interpreter.source) {
        case 'python-extension':
            return "the Python extension's selected interpreter";
        case 'setting':
            return 'gradguard.interpreter';
        case 'default':
            return 'python3 on PATH';
    }
}
