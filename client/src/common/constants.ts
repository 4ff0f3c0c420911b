// Names shared by the manifest (package.json) and the code.
export const EXTENSION_ID = 'gradguard';
export const SERVER_NAME = 'GradGuard';
export const SECTION = 'gradguard';
export const FIX_ALL_KIND = 'source.fixAll.gradguard';
export const PYTHON_EXTENSION_ID = 'ms-python.python';

export const COMMANDS = {
    restart: 'gradguard.restart',
    fixAll: 'gradguard.fixAll',
    showOutput: 'gradguard.showOutput',
} as const;
