import { defineConfig } from 'vite'
import solid from 'vite-plugin-solid'

export default defineConfig({
  root: import.meta.dirname,
  plugins: [solid()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Chunk graph for bench/bundle.ts (gzipped size of the first load and of each page).
    manifest: true,
    // Solid and its router in one chunk of their own, preloaded with the entry; pages and their
    // heavier libraries (uPlot, the bot-check widget, SIWE) stay in lazily loaded chunks.
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            {
              name: 'solid',
              test: /node_modules[\\/](solid-js[\\/](dist|web)|@solidjs[\\/]router)[\\/]/,
            },
          ],
        },
      },
    },
  },
})
