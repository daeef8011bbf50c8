check --help
compile --help
inspect --help
