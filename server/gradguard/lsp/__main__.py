from gradguard.lsp.server import main

main()
