# Native code: Cranelift IR, and machine code for either target.
inspect conformance/cases/channels/contract.yaml --emit clif
inspect conformance/cases/channels/contract.yaml --emit asm --target aarch64
inspect conformance/cases/channels/contract.yaml --emit ir --target aarch64
inspect conformance/cases/channels/contract.yaml --emit asm --target riscv
