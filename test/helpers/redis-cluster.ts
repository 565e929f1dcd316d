/**
 * A real Redis Cluster for tests: three masters (and, when asked, a replica of each), each a redis-server
 * process on a free loopback port with `--cluster-enabled yes`, joined with `redis-cli --cluster create`,
 * and stopped by process ID. `failMaster` kills the master of a slot with SIGKILL and waits until its
 * replica has taken over.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../bench/processes.ts'
import { redisServerBinary } from './redis-process.ts'

export type RedisCluster = {
  /** The gateway's REDIS_URL for it: `redis+cluster://` with every node as a seed. */
  url: string
  ports: number[]
  /** Kills the master serving `slot` with SIGKILL; resolves once the cluster is whole again without it. */
  failMaster(slot: number): Promise<{ killedPort: number; promotedPort: number }>
  stop(): Promise<void>
}

export const redisCliBinary = Bun.which('redis-cli')

export async function startRedisCluster(masters = 3, replicas = 0): Promise<RedisCluster> {
  if (!redisServerBinary || !redisCliBinary)
    throw new Error('redis-server and redis-cli are needed')
  const dir = await mkdtemp(join(tmpdir(), 'redis-cluster-'))
  const ports: number[] = []
  const children: Bun.Subprocess[] = []
  for (let i = 0; i < masters * (1 + replicas); i++) {
    const port = await clusterPort()
    ports.push(port)
    children.push(
      Bun.spawn(
        [
          redisServerBinary,
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--cluster-node-timeout',
          replicas > 0 ? '1000' : '2000',
          '--save',
          '',
          '--appendonly',
          'no',
          '--dir',
          dir,
        ],
        { stdout: 'ignore', stderr: 'ignore' },
      ),
    )
  }
  const stop = async () => {
    for (const child of children) child.kill('SIGKILL')
    await Promise.all(children.map((child) => child.exited))
    await rm(dir, { recursive: true, force: true })
  }
  try {
    for (const [index, port] of ports.entries()) await waitForPing(port, children[index]!)
    const create = Bun.spawn(
      [
        redisCliBinary,
        '--cluster',
        'create',
        ...ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ],
      { stdout: 'pipe', stderr: 'pipe' },
    )
    if ((await create.exited) !== 0)
      throw new Error(`cluster create failed: ${await new Response(create.stdout).text()}`)
    for (const port of ports) await waitForClusterOk(port)
    // A replica takes over only once it has synchronised with its master.
    for (const port of ports) await waitForReplication(port)
  } catch (error) {
    await stop()
    throw error
  }
  const alive = new Set(ports)
  return {
    url: `redis+cluster://${ports.map((port) => `127.0.0.1:${port}`).join(',')}`,
    ports,
    async failMaster(slot) {
      const [survivor] = [...alive]
      const killedPort = await masterOf(survivor!, slot)
      children[ports.indexOf(killedPort)]!.kill('SIGKILL')
      alive.delete(killedPort)
      for (let attempt = 0; attempt < 400; attempt++) {
        const asked = [...alive][0]!
        const promotedPort = await masterOf(asked, slot).catch(() => killedPort)
        if (
          promotedPort !== killedPort &&
          (await cli(asked, 'cluster', 'info')).includes('cluster_state:ok')
        )
          return { killedPort, promotedPort }
        await Bun.sleep(50)
      }
      throw new Error(`no replica took over slot ${slot}`)
    },
    stop,
  }
}

/** The port of the master serving `slot`, as the node on `port` sees it (CLUSTER SLOTS). */
async function masterOf(port: number, slot: number): Promise<number> {
  const child = Bun.spawn([redisCliBinary!, '-p', String(port), '--json', 'cluster', 'slots'], {
    stdout: 'pipe',
    stderr: 'ignore',
  })
  const ranges = JSON.parse(await new Response(child.stdout).text()) as [
    number,
    number,
    [string, number, string],
  ][]
  await child.exited
  const range = ranges.find(([from, to]) => from <= slot && slot <= to)
  if (!range) throw new Error(`slot ${slot} is not served`)
  return range[2][1]
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const child = Bun.spawn([redisCliBinary!, '-p', String(port), ...args], {
    stdout: 'pipe',
    stderr: 'ignore',
  })
  const text = await new Response(child.stdout).text()
  await child.exited
  return text
}

/** Redis's highest port with a cluster bus: the bus listens 10,000 ports higher. */
const HIGHEST_CLUSTER_PORT = 65_535 - 10_000

/** A free port for a cluster node whose bus port (10,000 higher) is free as well. */
async function clusterPort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = await freePort()
    if (port <= HIGHEST_CLUSTER_PORT && (await canListen(port + 10_000))) return port
  }
  throw new Error('no free port pair for a cluster node')
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

async function waitForPing(port: number, child: Bun.Subprocess): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    if (child.exitCode !== null)
      throw new Error(`redis-server on ${port} exited with status ${child.exitCode}`)
    if ((await cli(port, 'ping')).trim() === 'PONG') return
    await Bun.sleep(25)
  }
  throw new Error(`redis-server on ${port} did not start`)
}

async function waitForReplication(port: number): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    const info = await cli(port, 'info', 'replication')
    if (info.includes('role:master') || info.includes('master_link_status:up')) return
    await Bun.sleep(50)
  }
  throw new Error(`the replica on ${port} did not synchronise`)
}

async function waitForClusterOk(port: number): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if ((await cli(port, 'cluster', 'info')).includes('cluster_state:ok')) return
    await Bun.sleep(50)
  }
  throw new Error(`the cluster did not become ready on ${port}`)
}
