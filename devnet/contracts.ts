/** The devnet's deployable contracts: their names in the compiled output and the ABI const each is exported as. */
export const ABI_EXPORTS = {
  MockUSDC: 'mockUsdcAbi',
  BoringVault: 'boringVaultAbi',
  Accountant: 'accountantAbi',
  TellerVeda: 'tellerVedaAbi',
  TellerNucleus: 'tellerNucleusAbi',
  AtomicQueueVeda: 'atomicQueueVedaAbi',
  AtomicQueueNucleus: 'atomicQueueNucleusAbi',
  RolesAuthority: 'rolesAuthorityAbi',
  NestVault: 'nestVaultAbi',
  OperatorRegistry: 'operatorRegistryAbi',
  RedeemOperator: 'redeemOperatorAbi',
  ShareOFT: 'shareOftAbi',
  Composer: 'composerAbi',
  Relayer: 'relayerAbi',
  Multicall3: 'multicall3Abi',
  NestHubAccountant: 'nestHubAccountantAbi',
  MockAggregator: 'mockAggregatorAbi',
} as const;

export type ContractName = keyof typeof ABI_EXPORTS;
