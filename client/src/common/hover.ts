import * as vscode from 'vscode';

// A link the server puts in a finding's hover: the rule's page, a Markdown file.
const RULE_PAGE = /\]\((file:\/\/[^)\s]*\/GG\d{3}\.md)\)/g;

/**
 * Links to a rule's page open it rendered, in VS Code's Markdown preview (other editors get
 * the file link as the server sent it). Only that command is trusted in the rewritten hover.
 */
export function previewRuleLinks(hover: vscode.Hover | null | undefined): vscode.Hover | null | undefined {
    if (!hover) {
        return hover;
    }
    let changed = false;
    const contents = hover.contents.map((part) => {
        const value = typeof part === 'string' ? part : (part as vscode.MarkdownString).value;
        const rewritten = value.replace(RULE_PAGE, (_match, uri: string) => {
            const args = encodeURIComponent(JSON.stringify([vscode.Uri.parse(uri)]));
            return `](command:markdown.showPreview?${args})`;
        });
        if (rewritten === value) {
            return part;
        }
        changed = true;
        const markdown = new vscode.MarkdownString(rewritten);
        markdown.isTrusted = { enabledCommands: ['markdown.showPreview'] };
        return markdown;
    });
    return changed ? new vscode.Hover(contents, hover.range) : hover;
}

/** What `handleDiagnostics` middleware gets and passes on: the part of a diagnostic read here. */
interface CodedDiagnostic {
    code?: string | number | { value: string | number; target: vscode.Uri };
}

/**
 * A diagnostic's code as plain text: its link (codeDescription) would open the rule page's
 * Markdown source, and VS Code opens diagnostic code links without trusting commands, so it
 * cannot open the preview. The hover's one link opens the page rendered (previewRuleLinks).
 */
export function plainCodes<T extends CodedDiagnostic>(diagnostics: T[]): T[] {
    for (const diagnostic of diagnostics) {
        if (typeof diagnostic.code === 'object' && diagnostic.code !== null) {
            diagnostic.code = diagnostic.code.value;
        }
    }
    return diagnostics;
}
