// `npm run package`, step 1: build GradGuard's wheel from this repository into bundled/,
// which the .vsix carries for the one-click install.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(__dirname, '..', '..');
const bundled = path.join(root, 'bundled');
const venvPython = path.join(root, '.venv', 'bin', 'python');
const python = process.env.GRADGUARD_BUILD_PYTHON ?? (fs.existsSync(venvPython) ? venvPython : 'python3');

fs.rmSync(bundled, { recursive: true, force: true });
execFileSync(python, ['-m', 'pip', 'wheel', '--no-deps', '--disable-pip-version-check', '-q', '-w', bundled, root], {
    stdio: 'inherit',
});
const wheels = fs.readdirSync(bundled).filter((f) => /^gradguard-.*\.whl$/.test(f));
if (wheels.length !== 1) {
    throw new Error(`expected one gradguard wheel in ${bundled}, found: ${wheels.join(', ') || 'none'}`);
}
console.log(`bundled/${wheels[0]}`);
