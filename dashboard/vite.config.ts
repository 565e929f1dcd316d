import { defineConfig } from 'vite'
import solid from 'vite-plugin-solid'

export default defineConfig({
  root: import.meta.dirname,
  plugins: [solid()],
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
})
