/**
 * The embedded database's thread: PGlite (Postgres in WASM) and its pglite-socket server run here, so
 * query execution never occupies the event loop that serves requests. The parent sends the data path,
 * gets back the socket address, and later asks it to stop.
 */
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'

declare const self: Worker

type Start = { type: 'start'; path: string }
type Stop = { type: 'stop' }

let stop: (() => Promise<void>) | undefined

self.onmessage = async (event: MessageEvent<Start | Stop>) => {
  const message = event.data
  try {
    if (message.type === 'start') {
      const db = await PGlite.create(message.path)
      const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 4 })
      await server.start()
      stop = async () => {
        await server.stop()
        await db.close()
      }
      self.postMessage({ type: 'started', address: server.getServerConn() })
    } else {
      await stop?.()
      self.postMessage({ type: 'stopped' })
    }
  } catch (error) {
    self.postMessage({ type: 'failed', message: (error as Error).message })
  }
}
