test examples/contracts/
