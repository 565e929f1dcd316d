/**
 * A real Redis Cluster for tests: three masters, each a redis-server process on a free loopback port with
 * `--cluster-enabled yes`, joined with `redis-cli --cluster create`, and stopped by process ID.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../bench/processes.ts'
import { redisServerBinary } from './redis-process.ts'

export type RedisCluster = {
  /** The gateway's REDIS_URL for it: `redis+cluster://` with every node as a seed. */
  url: string
  ports: number[]
  stop(): Promise<void>
}

export const redisCliBinary = Bun.which('redis-cli')

export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  if (!redisServerBinary || !redisCliBinary)
    throw new Error('redis-server and redis-cli are needed')
  const dir = await mkdtemp(join(tmpdir(), 'redis-cluster-'))
  const ports: number[] = []
  const children: Bun.Subprocess[] = []
  for (let i = 0; i < masters; i++) {
    const port = await freePort()
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
          '2000',
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
    for (const port of ports) await waitForPing(port)
    const create = Bun.spawn(
      [
        redisCliBinary,
        '--cluster',
        'create',
        ...ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { stdout: 'pipe', stderr: 'pipe' },
    )
    if ((await create.exited) !== 0)
      throw new Error(`cluster create failed: ${await new Response(create.stdout).text()}`)
    for (const port of ports) await waitForClusterOk(port)
  } catch (error) {
    await stop()
    throw error
  }
  return {
    url: `redis+cluster://${ports.map((port) => `127.0.0.1:${port}`).join(',')}`,
    ports,
    stop,
  }
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

async function waitForPing(port: number): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if ((await cli(port, 'ping')).trim() === 'PONG') return
    await Bun.sleep(25)
  }
  throw new Error(`redis-server on ${port} did not start`)
}

async function waitForClusterOk(port: number): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if ((await cli(port, 'cluster', 'info')).includes('cluster_state:ok')) return
    await Bun.sleep(50)
  }
  throw new Error(`the cluster did not become ready on ${port}`)
}
