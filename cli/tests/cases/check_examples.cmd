check examples/contracts/
