check --help
compile --help
inspect --help
serve --help
sql --help
fmt --help
schema --help
lsp --help
