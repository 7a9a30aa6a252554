package io.github.zklock.curator;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.framework.state.ConnectionState;
import org.jspecify.annotations.Nullable;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;

/**
 * The operator side of a {@link CuratorLockRegistry}: what this application holds and waits for,
 * who holds and waits for a key across the ensemble, the revocation of a stuck lock, and the
 * registry's counters. The {@code zklocks} actuator endpoint, the health indicator and the
 * metrics of the Spring Boot starter use it; an application needs it only for operations.
 * Records of the answers: {@link HeldLock}, {@link WaitingLock}, {@link LockParticipant},
 * {@link LockQueue}, {@link Revocation}, {@link LockOwner}; none holds a credential.
 *
 * <p>Thread-safe. Methods that say "local state" send no ZooKeeper request.
 */
public class CuratorLockAdmin {

	private final CuratorLockRegistry registry;

	/**
	 * Create the operator view of a registry.
	 * @param registry the registry it describes
	 */
	public CuratorLockAdmin(CuratorLockRegistry registry) {
		this.registry = Objects.requireNonNull(registry, "registry must not be null");
	}

	/**
	 * Return the registry it describes.
	 * @return the registry
	 */
	public CuratorLockRegistry registry() {
		return this.registry;
	}

	/**
	 * Return the grants this application holds now, nested grants each, in no particular order.
	 * @return a snapshot of the held grants
	 */
	public List<LockHandle> heldLocks() {
		return List.copyOf(this.registry.held().handles());
	}

	/**
	 * Describe the grants this application holds, oldest first. Local state, no ZooKeeper
	 * request.
	 * @return the held grants
	 */
	public List<HeldLock> describeHeldLocks() {
		return this.registry.held().handles()
			.stream()
			.map(CuratorLockHandle::snapshot)
			.sorted(Comparator.comparing(HeldLock::since))
			.toList();
	}

	/**
	 * Describe the znodes this application keeps while nobody holds them (see {@link KeptLocks}),
	 * least recently used first. Local state, no ZooKeeper request. A kept znode is no grant: it is
	 * not among {@link #describeHeldLocks()}; other participants see it first in the lock's queue
	 * ({@link #describeParticipants(String)}), as a holder.
	 * @return the kept znodes
	 */
	public List<KeptLock> describeKeptLocks() {
		return this.registry.grants()
			.kept()
			.stream()
			.sorted(Comparator.comparing(KeptLock::keptSince))
			.toList();
	}

	/**
	 * Return how many keys this application keeps while nobody holds them (see {@link KeptLocks}).
	 * @return the number of kept znodes
	 */
	public int keptLockCount() {
		return this.registry.grants().keptKeys().keptCount();
	}

	/**
	 * Return how many grants were made on kept znodes so far, without a ZooKeeper write.
	 * @return the number of grants from kept znodes
	 */
	public long keptGrantCount() {
		return this.registry.grants().keptKeys().keptGrants();
	}

	/**
	 * Return how many znodes were not kept so far although kept locks are on, because their key
	 * was being taken in turns (the back-off after kept znodes given up before any grant rode them,
	 * the guide's "Keys taken in turns") or was visited from elsewhere (granted after waiting for
	 * another participant's znode, the guide's "Keys visited from elsewhere").
	 * @return the number of znodes deleted at their last release instead of kept
	 */
	public long keptSkippedCount() {
		return this.registry.grants().keptKeys().skippedKeeping();
	}

	/**
	 * Return how many kept znodes were given up so far for a cause.
	 * @param cause {@code asked} (another participant queued), {@code idle}, {@code max-keys},
	 * {@code revoked}, {@code session} or {@code closed}
	 * @return the number given up for it
	 * @throws IllegalArgumentException if the cause is none of these
	 */
	public long keptGivenUpCount(String cause) {
		for (KeptKeys.Cause each : KeptKeys.Cause.values()) {
			if (each.tag().equals(cause)) {
				return this.registry.grants().keptKeys().givenUp(each);
			}
		}
		throw new IllegalArgumentException("No such cause of giving a kept znode up: '" + cause + "'");
	}

	/**
	 * The causes of giving a kept znode up, as {@link #keptGivenUpCount(String)} names them.
	 * @return the causes
	 */
	public static List<String> keptGiveUpCauses() {
		return java.util.Arrays.stream(KeptKeys.Cause.values()).map(KeptKeys.Cause::tag).toList();
	}

	/**
	 * Describe the threads of this application waiting for a lock, and its asynchronous requests
	 * waiting without a thread (named {@code async}), longest waiting first. Local state, no
	 * ZooKeeper request.
	 * @return the waiting threads and requests
	 */
	public List<WaitingLock> describeWaitingLocks() {
		return this.registry.grants()
			.waiting()
			.stream()
			.sorted(Comparator.comparing(WaitingLock::since))
			.toList();
	}

	/**
	 * Describe the lock znodes of a key across the ensemble, of any client and any lock kind, in
	 * queue order: the first EXCLUSIVE or WRITE participant holds the lock, READ participants
	 * before the first WRITE hold it together, permits of a semaphore (kind {@code PERMIT (of N)})
	 * hold up to N at once. Reads ZooKeeper (one getChildren, then one getData per participant;
	 * for leases one more getChildren and a getData of the lock path).
	 * @param key the key below the root path
	 * @return the participants, empty if nobody holds or waits for the lock
	 * @throws InvalidLockPathException if the key is not a legal lock key
	 * @throws LockException if ZooKeeper cannot be reached
	 */
	public List<LockParticipant> describeParticipants(String key) {
		String lockPath = this.registry.lockPath(key);
		List<LockParticipant> participants;
		try {
			participants = LockParticipants.describe(this.registry.client(), lockPath);
		}
		catch (Exception ex) {
			throw ZooKeeperFailures.translate(ex, "describe", lockPath, LockMode.EXCLUSIVE, this.registry.client());
		}
		// The chain length of this application's held znodes (the longest grant on each).
		Map<String, Integer> chains = new HashMap<>();
		for (CuratorLockHandle handle : this.registry.held().handles()) {
			chains.merge(handle.nodePath(), handle.snapshot().chainLength(), Math::max);
		}
		return participants.stream()
			.map((participant) -> participant.holder() && chains.containsKey(participant.path())
					? participant.withChainLength(chains.get(participant.path())) : participant)
			.toList();
	}

	/**
	 * Describe who holds and waits for the lock of a key: its participants across the ensemble
	 * (see {@link #describeParticipants(String)}, whose requests it sends), how many wait, and how
	 * many of this application's threads wait.
	 * @param key the key below the root path
	 * @return the lock's queue
	 * @throws InvalidLockPathException if the key is not a legal lock key
	 * @throws LockException if ZooKeeper cannot be reached
	 */
	public LockQueue describeQueue(String key) {
		String lockPath = this.registry.lockPath(key);
		List<LockParticipant> participants = describeParticipants(key);
		int localWaiters = (int) describeWaitingLocks().stream()
			.filter((waiting) -> waiting.path().equals(lockPath))
			.count();
		String session;
		try {
			session = Long.toHexString(this.registry.client().getZookeeperClient().getZooKeeper().getSessionId());
		}
		catch (Exception ex) {
			throw ZooKeeperFailures.translate(ex, "describe", lockPath, LockMode.EXCLUSIVE, this.registry.client());
		}
		int queued = 0;
		int queuedHere = 0;
		for (LockParticipant participant : participants) {
			if (!participant.holder()) {
				queued++;
				queuedHere += participant.sessionId().equals(session) ? 1 : 0;
			}
		}
		// This application's waiting threads with no znode yet wait in its local queues. The two
		// reads are not atomic: a thread may have left meanwhile.
		return new LockQueue(lockPath, participants, queued + Math.max(0, localWaiters - queuedHere),
				localWaiters);
	}

	/**
	 * Revoke the lock of a key: make its holders, in any application, give it up, so that its
	 * waiters are granted. For an operator facing a stuck lock (the {@code zklocks} endpoint's
	 * DELETE operation).
	 * <ul>
	 * <li>{@link RevocationMode#REQUEST}: Curator's revocation protocol
	 * ({@code Revoker.attemptRevoke}): the data of each holder's znode is set to
	 * {@code __REVOKE__}; a holder that watches its znode gives the lock up (this library's
	 * registries do for grants held longer than their
	 * {@linkplain CuratorLockRegistry#setRevocationCheckInterval revocation check interval}: the grant
	 * becomes {@link LockState#LOST} and its znode is deleted; raw Curator holders
	 * that called {@code makeRevocable} run their listener). Then waits up to {@code wait} for the
	 * holders' znodes to be deleted.</li>
	 * <li>{@link RevocationMode#FORCE}: deletes the holders' znodes (guaranteed delete). Their
	 * waiters are granted at once; a holder of this library learns it through its watch (once held
	 * longer than its check interval) and its grant becomes LOST, any other holder is not told.</li>
	 * </ul>
	 * Sends the requests of {@link #describeParticipants(String)}, then one setData or delete per
	 * holder, then (when requested) one exists per holder every 50 ms while waiting.
	 * @param key the key below the root path
	 * @param mode whether to ask the holders or delete their znodes
	 * @param wait how long to wait for the holders to give the lock up (ignored for
	 * {@link RevocationMode#FORCE})
	 * @return what was done; {@link RevocationAction#NOT_HELD} when nobody held the lock, with
	 * nothing written
	 * @throws InvalidLockPathException if the key is not a legal lock key
	 * @throws LockException if ZooKeeper cannot be reached
	 */
	public Revocation revoke(String key, RevocationMode mode, Duration wait) {
		boolean force = Objects.requireNonNull(mode, "mode must not be null") == RevocationMode.FORCE;
		String lockPath = this.registry.lockPath(key);
		List<LockParticipant> holders = describeParticipants(key).stream()
			.filter(LockParticipant::holder)
			.toList();
		if (holders.isEmpty()) {
			return new Revocation(lockPath, RevocationAction.NOT_HELD, holders, true);
		}
		try {
			for (LockParticipant holder : holders) {
				if (force) {
					this.registry.client().delete().quietly().guaranteed().forPath(holder.path());
				}
				else {
					Revoker.attemptRevoke(this.registry.client(), holder.path());
				}
			}
			long deadline = System.nanoTime() + (force ? 0 : wait.toNanos());
			boolean released = allGone(holders);
			while (!released && System.nanoTime() < deadline) {
				Thread.sleep(50);
				released = allGone(holders);
			}
			return new Revocation(lockPath, force ? RevocationAction.FORCED_DELETE
					: RevocationAction.REVOCATION_REQUESTED, holders, released);
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			throw ZooKeeperFailures.translate(ex, "revoke", lockPath, LockMode.EXCLUSIVE, this.registry.client());
		}
	}

	private boolean allGone(List<LockParticipant> holders) throws Exception {
		for (LockParticipant holder : holders) {
			if (this.registry.client().checkExists().forPath(holder.path()) != null) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Return this process as its lock znodes name it ({@code <pid>@<host>} is their data), for
	 * operators matching the participants of a lock to processes.
	 * @return this process
	 */
	public LockOwner owner() {
		return LockNodeData.self();
	}

	/**
	 * Return how many lock paths this application keeps a local queue for, in use or idle (idle
	 * ones up to the registry's cache capacity).
	 * @return the number of kept lock paths
	 */
	public int cachedKeyCount() {
		return this.registry.grants().keyCount();
	}

	/**
	 * Return the last connection state Curator reported since this registry was created.
	 * @return the state, or {@code null} if none was reported yet
	 */
	public @Nullable ConnectionState lastConnectionState() {
		return this.registry.held().lastConnectionState();
	}

	/**
	 * Return how many grants their ceiling ({@code lockAtMostFor}) ended so far while they held
	 * their znode: each also became {@link LockState#LOST}.
	 * @return the number of grants ended by their ceiling
	 */
	public long ceilingEndCount() {
		return this.registry.grants().ceilingEndCount();
	}

	/**
	 * Return the largest share of its ceiling ({@code lockAtMostFor}) that a grant held now has
	 * used: for each held grant with a deadline, the time since it was granted over the time from
	 * its grant to its deadline (an extension moves the deadline). Local state, no ZooKeeper
	 * request.
	 * @param now the instant to measure at, on this application's clock
	 * @return between 0 (no held grant has a ceiling, or none has used any of it) and 1 (a grant
	 * reached its ceiling)
	 */
	public double ceilingUsedShare(Instant now) {
		double largest = 0;
		for (HeldLock held : describeHeldLocks()) {
			Instant deadline = held.deadline();
			if (deadline == null || held.state() == LockState.LOST) {
				continue;
			}
			long allowed = Duration.between(held.since(), deadline).toNanos();
			long used = Duration.between(held.since(), now).toNanos();
			double share = (allowed <= 0) ? 1 : Math.min(1, Math.max(0, (double) used / allowed));
			largest = Math.max(largest, share);
		}
		return largest;
	}

	/**
	 * Return whether the registry's ZooKeeper client is connected now (what the {@code zkLock}
	 * health indicator reports as up): {@code false} while the connection is lost, so while
	 * Curator's state is {@code SUSPENDED} or {@code LOST}. Local state, no ZooKeeper request.
	 * @return whether the application is connected to ZooKeeper
	 */
	public boolean isConnected() {
		return this.registry.client().getZookeeperClient().isConnected();
	}

	/**
	 * Return how many grants this application holds (nested grants counted each).
	 * @return the number of unreleased grants
	 */
	public int heldLockCount() {
		return this.registry.held().size();
	}

}
