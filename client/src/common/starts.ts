// When the server starts and stops: one start or stop at a time, in order, and no start
// that would only repeat the one already made.

/** What the queue drives (the ServerManager, or a test's stand-in). */
export interface Startable {
    /** Starts the server; the interpreter it chose, or undefined when it did not try (Restricted Mode). */
    start(reason: string): Promise<string | undefined>;
    stop(): Promise<void>;
    /** The interpreter a start would choose now (cheap: settings and the Python extension only). */
    wouldChoose(): Promise<string>;
    failed(e: unknown): void;
    skipped(reason: string, interpreter: string): void;
}

export class StartQueue {
    private queue: Promise<void> = Promise.resolve();
    private chosen: string | undefined; // the interpreter of the last start that tried

    constructor(private readonly server: Startable) {}

    /** Stop, then start, whatever runs now (the Restart command, a finished install). */
    restart(reason: string): Promise<void> {
        return this.then(() => this.stopAndStart(reason));
    }

    /**
     * Something the server's choice depends on changed (trust granted, the interpreter setting, the
     * Python extension's selection): start again only if the choice differs from the last start's,
     * or if no start has tried yet. Granting trust fires several of these at once; the server
     * then starts once.
     */
    reconsider(reason: string): Promise<void> {
        return this.then(async () => {
            if (this.chosen !== undefined) {
                const now = await this.server.wouldChoose();
                if (now === this.chosen) {
                    this.server.skipped(reason, now);
                    return;
                }
            }
            await this.stopAndStart(reason);
        });
    }

    stop(): Promise<void> {
        return this.then(async () => {
            this.chosen = undefined;
            await this.server.stop();
        });
    }

    private async stopAndStart(reason: string): Promise<void> {
        await this.server.stop();
        this.chosen = undefined;
        this.chosen = await this.server.start(reason);
    }

    private then(step: () => Promise<void>): Promise<void> {
        this.queue = this.queue.then(step).catch((e) => this.server.failed(e));
        return this.queue;
    }
}

/** An error's words for the log: never `[object Object]`. */
export function errorText(e: unknown): string {
    if (e instanceof Error) {
        return e.message;
    }
    if (typeof e === 'string') {
        return e;
    }
    if (typeof e === 'object' && e !== null) {
        const message = (e as { message?: unknown }).message;
        if (typeof message === 'string') {
            return message;
        }
        try {
            return JSON.stringify(e);
        } catch {
            return Object.prototype.toString.call(e);
        }
    }
    return String(e);
}
