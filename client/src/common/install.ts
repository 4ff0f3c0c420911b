import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

// Whether GradGuard can run in an interpreter, and installing the wheel the .vsix carries.

export type Check =
    | { status: 'ok'; version: string; executable: string } // executable: sys.executable, an absolute path
    | { status: 'no-interpreter'; detail: string }
    | { status: 'not-installed'; detail: string };

interface Run {
    code: number | string | null;
    stdout: string;
    stderr: string;
}

function run(command: string, args: string[], timeoutMs: number): Promise<Run> {
    return new Promise((resolve) => {
        execFile(command, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
            const code = err === null ? 0 : ((err as NodeJS.ErrnoException).code ?? (err as { code?: number }).code ?? 1);
            resolve({ code: code as number | string, stdout: String(stdout), stderr: String(stderr) || (err?.message ?? '') });
        });
    });
}

/** Is `gradguard` importable in this interpreter (which version, and the interpreter's absolute path)? */
export async function checkGradGuard(interpreter: string): Promise<Check> {
    const r = await run(interpreter, ['-c', 'import sys, gradguard; print(gradguard.__version__); print(sys.executable)'], 60_000);
    if (r.code === 0) {
        const [version, executable] = r.stdout.trim().split('\n');
        return { status: 'ok', version, executable: executable || interpreter };
    }
    if (r.code === 'ENOENT' || r.code === 'EACCES') {
        return { status: 'no-interpreter', detail: `${interpreter}: ${r.code === 'ENOENT' ? 'not found' : 'not executable'}` };
    }
    return { status: 'not-installed', detail: r.stderr.trim() };
}

/** The GradGuard wheel inside the extension (put there by `npm run package`), if any. */
export function bundledWheel(extensionPath: string): string | undefined {
    const dir = path.join(extensionPath, 'bundled');
    const wheels = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => /^gradguard-.*\.whl$/.test(f)) : [];
    return wheels.length > 0 ? path.join(dir, wheels.sort()[wheels.length - 1]) : undefined;
}

/** The version in a wheel's file name (`gradguard-0.2.0-py3-none-any.whl` -> `0.2.0`). */
export function wheelVersion(wheel: string): string | undefined {
    return /^gradguard-([^-]+)-/.exec(path.basename(wheel))?.[1];
}

export interface InstallResult {
    ok: boolean;
    output: string; // pip's stdout and stderr, for the output channel
}

/** `<interpreter> -m pip install <wheel>`: dependencies come from the package index. */
export async function installWheel(interpreter: string, wheel: string): Promise<InstallResult> {
    const r = await run(interpreter, ['-m', 'pip', 'install', '--disable-pip-version-check', wheel], 15 * 60_000);
    return { ok: r.code === 0, output: [r.stdout.trim(), r.stderr.trim()].filter((s) => s !== '').join('\n') };
}

/**
 * The environment the extension owns (like Microsoft's Python tool extensions): a venv under the
 * extension's global storage, so that GradGuard and its dependencies never go into the user's
 * interpreter unless they choose it. Returns the venv's python.
 */
export function ownEnvironment(storagePath: string): { dir: string; python: string } {
    const dir = path.join(storagePath, 'env');
    const python = process.platform === 'win32' ? path.join(dir, 'Scripts', 'python.exe') : path.join(dir, 'bin', 'python');
    return { dir, python };
}

/** `<base> -m venv <dir>`, then the wheel pip-installed into it (dependencies from the package index). */
export async function createOwnEnvironment(base: string, dir: string, python: string, wheel: string): Promise<InstallResult> {
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    const venv = await run(base, ['-m', 'venv', '--clear', dir], 5 * 60_000);
    const made = [`$ ${base} -m venv --clear ${dir}`, venv.stdout.trim(), venv.stderr.trim()].filter((s) => s !== '').join('\n');
    if (venv.code !== 0) {
        return { ok: false, output: made };
    }
    const pip = await installWheel(python, wheel);
    return { ok: pip.ok, output: `${made}\n$ ${python} -m pip install ${wheel}\n${pip.output}` };
}
