"""GradGuard's language server: a thin LSP layer over `gradguard.engine`."""
