# Native code: Cranelift IR, and machine code for either target.
inspect conformance/cases/channels/contract.yaml --emit clif
inspect conformance/cases/channels/contract.yaml --emit asm --target aarch64
inspect conformance/cases/channels/contract.yaml --emit ir --target aarch64
inspect conformance/cases/channels/contract.yaml --emit asm --target riscv
# The batch entry's vector pass over rule guards, as NEON code.
inspect backend/tests/aarch64/cases/guards_decimal.yaml --emit asm --target aarch64
