/**
 * One way to open Redis: a single server (`redis://`, `rediss://`) or a Redis Cluster
 * (`redis+cluster://host:port,host:port` with its seed nodes, `rediss+cluster://` over TLS; user and
 * password as in `redis://`). Every key one script or command touches carries one account's hash tag,
 * or is a single key, so the same code runs on both.
 */
import Redis, { Cluster, type ClusterNode, type RedisOptions } from 'ioredis'

export type RedisClient = Redis | Cluster

/** The seed nodes of a cluster URL, or undefined for a single server's URL. */
export function clusterNodes(
  url: string,
): { nodes: ClusterNode[]; options: RedisOptions } | undefined {
  const match = /^(rediss?)\+cluster:\/\/(?:([^@/]*)@)?([^/?#]+)/.exec(url)
  if (!match) return undefined
  const [, scheme, credentials, hosts] = match
  const nodes = hosts!.split(',').map((entry) => {
    const at = entry.lastIndexOf(':')
    return at > 0
      ? { host: entry.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(entry.slice(at + 1)) }
      : { host: entry, port: 6379 }
  })
  const options: RedisOptions = {}
  if (credentials) {
    const [user, password] = credentials.split(':').map(decodeURIComponent)
    if (password !== undefined) {
      options.username = user || undefined
      options.password = password
    } else options.password = user
  }
  if (scheme === 'rediss') options.tls = {}
  return { nodes, options }
}

/** A client for the URL: a Cluster for a cluster URL, else a single connection. */
export function connectRedis(url: string, options: RedisOptions): RedisClient {
  const cluster = clusterNodes(url)
  if (!cluster) return new Redis(url, options)
  const { keyPrefix, enableOfflineQueue, lazyConnect, ...node } = options
  return new Cluster(cluster.nodes, {
    keyPrefix,
    enableOfflineQueue,
    lazyConnect,
    // Retries follow MOVED/ASK redirections after a failover; the nodes' own options as given.
    redisOptions: { ...node, ...cluster.options },
    clusterRetryStrategy: (attempt) => Math.min(attempt * 100, 2000),
  })
}

/** A second connection like `client`, with some options changed (a subscriber, say). */
export function duplicateRedis(client: RedisClient, overrides: RedisOptions): RedisClient {
  if (client instanceof Cluster) {
    const { keyPrefix, enableOfflineQueue, ...node } = overrides
    return client.duplicate(undefined, {
      ...client.options,
      keyPrefix,
      enableOfflineQueue,
      redisOptions: { ...client.options.redisOptions, ...node },
    })
  }
  return client.duplicate(overrides)
}
