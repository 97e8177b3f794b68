// Package leases is the one implementation of coordination.k8s.io Leases
// in kopf-go: the Leases that a replica holds (its membership, a claim,
// an election) and its judgement of the Leases of the other replicas.
// Peering's HA election (runtime/peering), the sharding coordinator
// (runtime/sharding) and the admission replicas (runtime/admission) are
// built of its parts.
//
// The contract, shared by every user:
//
//   - Identity. A replica is named by Kopf's detect_own_id (DetectOwnID):
//     $POD_ID if set, else "user@host/YYYYmmddHHMMSS/xyz". The identity is
//     a Lease's spec.holderIdentity.
//
//   - Liveness. A held Lease is live while its record (holder, renewTime,
//     resourceVersion) was seen to change within its leaseDurationSeconds,
//     measured on the observer's own clock from the moment it observed the
//     change (Observer), as client-go's leader election judges it; so no
//     two replicas' clocks need to agree. A Lease seen for the first time
//     is live for one duration from then. A Lease without a holder is free.
//
//   - Writes. Every write of a Lease read before is guarded by the
//     resourceVersion it was read with (Update), so that of two replicas
//     writing one Lease at once, one fails with a conflict. Writer.Take
//     claims a Lease for this replica (a transition if another held it) or
//     renews it, Writer.Release frees it (no holder, a duration of 1 s, as
//     client-go's ReleaseOnCancel), so that the next holder need not wait.
//
//   - Timing. Duration is how long a Lease is valid after its last
//     observed change; a holder renews every RetryPeriod and gives its
//     Lease up (stops what it guards) if it could not renew within
//     RenewDeadline, before anyone else may take it (Timing, with
//     client-go's defaults: 15 s, 10 s, 2 s).
//
// Held is one Lease that this replica holds, written through these rules:
// its Renew keeps a Lease only this replica writes (a membership), its
// TryAcquireOrRenew is client-go's election step; its Release and Delete
// read or name the Lease themselves (Writer's take a Lease or a name). The package uses the
// typed coordination client only (not client-go's whole clientset, which
// an operator does not link otherwise).
package leases
