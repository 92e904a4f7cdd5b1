// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Share stand-in for the EVM ingest tests and the benchmarks: emits many ERC-20 Transfer
/// logs per transaction, so they can produce events fast (devnet/emitter.ts deploys it).
contract Emitter {
    event Transfer(address indexed from, address indexed to, uint256 amount);

    uint256 public totalSupply;

    /// Emits `n` transfers from `from` to `to` of `first`, `first + 1`, ... shares.
    function emitTransfers(address from, address to, uint256 first, uint256 n) external {
        for (uint256 i = 0; i < n; i++) emit Transfer(from, to, first + i);
        if (from == address(0)) totalSupply += n * first + (n * (n - 1)) / 2;
    }
}
