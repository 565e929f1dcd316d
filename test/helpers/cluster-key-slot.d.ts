/** The hash slot Redis Cluster gives a key (CRC16 of the key, or of its first `{…}` hash tag). */
declare module 'cluster-key-slot' {
  export default function calculateSlot(key: string | Uint8Array): number
}
