/**
 * An account's snapshot with this process's leases of it seen through: Redis counts a lease whole, as a
 * hold of all its room and an in-flight request for each of its slots, and knows none of the charges
 * the lease took since its last call. Seen through, the room and the slots no request uses are neither
 * held nor in flight, and the charges not yet sent are charged (balance, spend), so the balance, holds
 * and requests in progress read as they are. Leases of other processes still count whole until they are
 * used or given back (a sixteenth of what was left at most, for a second once idle).
 */
import type { Lease } from './lease.ts'
import type { AccountSnapshot } from './store.ts'

export function seeThroughLeases(snapshot: AccountSnapshot, leases: Lease[]): AccountSnapshot {
  if (!snapshot.loaded || leases.length === 0) return snapshot
  const view: AccountSnapshot = {
    ...snapshot,
    keys: snapshot.keys.map((key) => ({ ...key })),
    guardrails: snapshot.guardrails.map((guardrail) => ({ ...guardrail })),
  }
  view.unsentCharges = 0
  for (const lease of leases) {
    view.unsentCharges += lease.charges.length
    const unsent = lease.charges.reduce((sum, charge) => sum + charge.chargedNano, 0)
    // Redis holds the lease's amount with its unsent charges in it; a lease no longer in Redis holds nothing.
    const heldInLease = lease.inRedis
      ? lease.amountNano -
        lease.openNano +
        lease.charges
          .filter((charge) => charge.leaseId === lease.id)
          .reduce((sum, charge) => sum + charge.chargedNano, 0)
      : 0
    const freeSlots = lease.inRedis ? lease.slots - lease.openCount : 0
    view.balanceNano -= unsent
    view.heldNano -= heldInLease
    view.inFlight -= freeSlots
    const key = view.keys.find((each) => each.keyId === lease.input.keyId)
    if (key) {
      key.heldNano -= heldInLease
      key.inFlight -= freeSlots
      key.daySpentNano += unsent
      key.monthSpentNano += unsent
    }
    const guardrail = view.guardrails.find((each) => each.guardrailId === lease.input.guardrail?.id)
    if (guardrail) {
      guardrail.heldNano -= heldInLease
      guardrail.monthSpentNano += unsent
    }
  }
  view.availableNano = view.balanceNano - view.heldNano
  return view
}
