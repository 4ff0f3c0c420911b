from gradguard.cli import main

main()
