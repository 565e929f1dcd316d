/**
 * A local EVM chain for the deposit tests: Hardhat's node (its simulated network, EDR) started as a
 * process on 127.0.0.1, an ERC-20 compiled with solc-js and deployed to it, and the few calls the tests
 * make: transfer, mine, snapshot and revert (a reorganisation: the chain continues from an earlier block
 * without what was mined since).
 */
import { join } from 'node:path'
import solc from 'solc'
import {
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  http,
  publicActions,
  type Address,
  type Hex,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { freePort } from '../../../bench/processes.ts'

const DIR = import.meta.dir
const ROOT = join(DIR, '..', '..', '..')
/** Hardhat's first default account (a publicly known test key). */
const FUNDED_KEY: Hex = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
/** Hardhat's second default account (also publicly known): another sender in the same block. */
const OTHER_KEY: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'

let compiled: Promise<{ abi: unknown[]; bytecode: Hex }> | undefined

/** The test token, compiled once per run. */
function testToken(): Promise<{ abi: unknown[]; bytecode: Hex }> {
  compiled ??= (async () => {
    const source = await Bun.file(join(DIR, 'TestToken.sol')).text()
    const output = JSON.parse(
      solc.compile(
        JSON.stringify({
          language: 'Solidity',
          sources: { 'TestToken.sol': { content: source } },
          settings: { outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
        }),
      ),
    )
    const errors = (output.errors ?? []).filter((e: { severity: string }) => e.severity === 'error')
    if (errors.length > 0) throw new Error(JSON.stringify(errors))
    const contract = output.contracts['TestToken.sol'].TestToken
    return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` as Hex }
  })()
  return compiled
}

export type LocalChain = Awaited<ReturnType<typeof startLocalChain>>

export async function startLocalChain() {
  const port = await freePort()
  const node = Bun.spawn(
    [
      process.execPath,
      join(ROOT, 'node_modules', 'hardhat', 'dist', 'src', 'cli.js'),
      '--config',
      join(DIR, 'hardhat.config.ts'),
      'node',
      '--hostname',
      '127.0.0.1',
      '--port',
      String(port),
    ],
    {
      cwd: DIR,
      stdout: 'pipe',
      stderr: 'pipe',
      env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true' },
    },
  )
  const rpcUrl = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    try {
      const response = await fetch(rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      })
      if (response.ok) break
    } catch {
      // Not listening yet.
    }
    if (node.exitCode !== null || Date.now() > deadline)
      throw new Error(`the local chain did not start: ${await new Response(node.stderr).text()}`)
    await Bun.sleep(200)
  }
  const account = privateKeyToAccount(FUNDED_KEY)
  const transport = http(rpcUrl)
  const wallet = createWalletClient({ account, transport, chain: undefined }).extend(publicActions)
  const other = createWalletClient({
    account: privateKeyToAccount(OTHER_KEY),
    transport,
    chain: undefined,
  }).extend(publicActions)
  const test = createTestClient({ mode: 'hardhat', transport })
  const chain = {
    id: 31337,
    name: 'local',
    nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  }
  const token = await testToken()

  return {
    rpcUrl,
    sender: account.address,
    /** Deploys a token with `decimals` and a large supply held by the sender; returns its address. */
    async deployToken(decimals: number): Promise<Address> {
      const hash = await wallet.deployContract({
        abi: token.abi,
        bytecode: token.bytecode,
        args: [decimals, 10n ** 30n],
        chain,
      })
      const receipt = await wallet.waitForTransactionReceipt({ hash })
      return receipt.contractAddress!
    },
    /** Sends `amount` token units to `to`; resolves with the transaction's block number. */
    async transfer(tokenAddress: Address, to: Address, amount: bigint): Promise<bigint> {
      const hash = await wallet.writeContract({
        address: tokenAddress,
        abi: token.abi,
        functionName: 'transfer',
        args: [to, amount],
        chain,
      })
      return (await wallet.waitForTransactionReceipt({ hash })).blockNumber
    },
    /** A signed transfer from the sender, not sent: the same transaction can be sent again after a revert. */
    async signTransfer(tokenAddress: Address, to: Address, amount: bigint): Promise<Hex> {
      const request = await wallet.prepareTransactionRequest({
        to: tokenAddress,
        data: encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [to, amount] }),
        chain,
      })
      return wallet.signTransaction({ ...request, chain } as never)
    },
    /** Sends a signed transaction; with automining off it waits in the pool for `mine`. */
    sendRaw: (serializedTransaction: Hex) => wallet.sendRawTransaction({ serializedTransaction }),
    /**
     * A zero-value transfer of `tokenAddress` from the second account (which holds none), paying a
     * higher tip so it comes first in the next block: it moves the logs of the block's later transactions.
     */
    async sendFiller(tokenAddress: Address): Promise<Hex> {
      return other.writeContract({
        address: tokenAddress,
        abi: token.abi,
        functionName: 'transfer',
        args: ['0x000000000000000000000000000000000000dEaD', 0n],
        maxPriorityFeePerGas: 50_000_000_000n,
        maxFeePerGas: 500_000_000_000n,
        chain,
      })
    },
    setAutomine: (enabled: boolean) => test.setAutomine(enabled),
    mine: (blocks: number) => test.mine({ blocks }),
    blockNumber: () => wallet.getBlockNumber(),
    snapshot: () => test.snapshot(),
    revert: (id: Hex) => test.revert({ id }),
    async stop() {
      node.kill('SIGTERM')
      await node.exited
    },
  }
}
