// The local chain the deposit tests run: Hardhat's simulated network, mining only when asked.
import { defineConfig } from 'hardhat/config'

export default defineConfig({
  networks: {
    default: {
      type: 'edr-simulated',
      chainId: 31337,
      mining: { auto: true, interval: 0 },
    },
  },
})
