package io.github.zklock.curator;

import java.io.Closeable;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockStateListener;
import io.github.zklock.spi.LockConditions;
import io.github.zklock.spi.LockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.spi.RequestRules;

/**
 * {@link LockRegistry} in the znode protocols of Apache Curator's lock recipes, so that raw Curator
 * code on the same path and this registry's grants exclude each other both ways: EXCLUSIVE as
 * {@code InterProcessMutex} (or, when not reentrant, a one-lease {@code InterProcessSemaphoreV2},
 * the recipe behind {@code InterProcessSemaphoreMutex}), READ and WRITE as the two sides of
 * {@code InterProcessReadWriteLock}, permits of a semaphore
 * ({@link io.github.zklock.LockRequest#permit(String, int)}) as {@code InterProcessSemaphoreV2}
 * with that many leases, the number being stored with the key so that participants naming another
 * one fail (see {@link io.github.zklock.PermitsMismatchException}). The locks follow the lock recipe
 * of the ZooKeeper recipes page: ephemeral sequential znodes below the lock path, each waiter
 * watching only its predecessor (no herd effect), with Curator's protected names making the create
 * recoverable after a connection loss.
 *
 * <p>One implementation of the protocols serves synchronous and asynchronous requests
 * ({@link ZnodeAcquisition}, driven by Curator's background operations): a grant takes one round
 * trip (the create and the listing are sent back to back), and a synchronous caller's thread only
 * waits for the outcome, so that its wait time bounds the call whether ZooKeeper answers or not.
 * The requests of one key, threads and asynchronous requests alike, wait in one local queue per
 * key ({@link LockKey}): EXCLUSIVE (reentrant) and WRITE requests share one znode per application,
 * handed from grant to grant (see {@link LocalHandoff}); READ requests and leases have a znode of
 * their own. Held grants follow the connection state (see {@link LockHandle#isHeld()}).
 *
 * <p>Thread-safe. Call {@link #close()} before closing the Curator client.
 */
public class CuratorLockRegistry implements LockRegistry, Closeable {

	/**
	 * Longest full lock path accepted, in characters. Longer keys are refused before any request:
	 * a request beyond the server's buffer limit ({@code jute.maxbuffer}, 1 MB by default) would
	 * make the server drop the connection, putting every lock of the session in doubt.
	 */
	public static final int MAX_PATH_LENGTH = 1024;

	/** How often held grants are checked for revocation unless set (see {@link #setRevocationCheckInterval}). */
	public static final Duration DEFAULT_REVOCATION_CHECK_INTERVAL = Duration.ofSeconds(1);

	private final CuratorFramework client;

	private final String rootPath;

	private final HeldLocks heldLocks = new HeldLocks();

	private final Grants grants;

	private final Revocations revocations;

	private final CheckedPermits checkedPermits;

	private final ConditionQueues conditions;

	/**
	 * The registry's one connection-state listener: the held grants follow the connection
	 * ({@link HeldLocks}), and the kept znodes are given up when the session is lost (they went with
	 * it; nobody held them).
	 */
	private final ConnectionStateListener connectionWatch;

	/** Ends the waits of asynchronous requests and the grants past their ceiling: one daemon thread. */
	private final ScheduledThreadPoolExecutor timer;

	/**
	 * Create a registry and start tracking the client's connection state.
	 * @param client a Curator client (started before the first lock request)
	 * @param rootPath the znode below which lock paths live, for example {@code /locks}
	 * @param cacheCapacity how many idle keys to keep (their queue and state, created again when
	 * needed); keys waited on or held are kept beyond it. It also bounds how many levels above lock
	 * paths the registry remembers to exist, so that a cold key creates only its missing parents
	 * @throws InvalidLockPathException if the root path is not a legal ZooKeeper path
	 * @throws IllegalArgumentException if the capacity is not positive
	 */
	public CuratorLockRegistry(CuratorFramework client, String rootPath, int cacheCapacity) {
		this.client = Objects.requireNonNull(client, "client must not be null");
		this.rootPath = LockPaths.validRootPath(rootPath);
		this.timer = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, "zk-lock-timer");
			thread.setDaemon(true);
			return thread;
		});
		this.timer.setRemoveOnCancelPolicy(true);
		CuratorZnodes znodes = new CuratorZnodes(client, this.rootPath, cacheCapacity);
		this.grants = new Grants(znodes, this.heldLocks, this.timer, System::nanoTime,
				cacheCapacity, new Grants.Failures() {

					@Override
					public RuntimeException translate(Throwable failure, String lockPath, LockMode mode) {
						return ZooKeeperFailures.translateAcquisition(failure, lockPath, mode, client);
					}

					@Override
					public RuntimeException notAnswered(String lockPath, LockMode mode, boolean connected) {
						return ZooKeeperFailures.notAnswered(lockPath, mode, connected, client);
					}

				}, this::readCzxid);
		this.conditions = new ConditionQueues(znodes, this::lockPath, (what, code) -> ZooKeeperFailures
			.translate(KeeperException.create(KeeperException.Code.get(code)), what, client));
		HeldLocks held = this.heldLocks;
		Grants keys = this.grants;
		ConditionQueues waiters = this.conditions;
		// One listener: the grants follow the connection first, then kept znodes and condition
		// waiters go with a lost session.
		this.connectionWatch = (changed, state) -> {
			held.stateChanged(changed, state);
			if (state == ConnectionState.LOST) {
				keys.giveUpKept(KeptKeys.Cause.SESSION);
				waiters.sessionLost();
			}
			else if (state == ConnectionState.RECONNECTED) {
				waiters.reconnected();
			}
		};
		client.getConnectionStateListenable().addListener(this.connectionWatch);
		this.revocations = new Revocations(client, this.heldLocks, this.grants::endZnode,
				DEFAULT_REVOCATION_CHECK_INTERVAL);
		this.checkedPermits = new CheckedPermits(client, znodes);
	}

	/**
	 * Acquire a lock on the calling thread: the request queues as an asynchronous one does (see
	 * {@link #submit(LockTarget)}) and the thread waits for its outcome, at most the target's wait
	 * time (a one-attempt request, at most the client's connection timeout), whether ZooKeeper
	 * answers meanwhile or not. A wait that ends without a grant leaves the queue, and what it sent
	 * is deleted (once its create answers, or by Curator's protected-create recovery). It is
	 * reported not granted only when the lock was seen held while it waited (a holder or turn in
	 * this application, or a listing with a znode ahead of its own) and the client is connected;
	 * it then returns once those deletes are answered (at most its wait time again, and at most the
	 * connection timeout), as
	 * Curator's recipes return false only after deleting their znode. Otherwise it is a
	 * {@link LockException} naming ZooKeeper, unless the wait was shorter than 100 ms (not granted:
	 * too short to tell a silent server from a round trip). A grant of a reentrant kind is bound to the thread.
	 */
	@Override
	public Optional<RegistryGrant> tryAcquire(LockTarget target) {
		Waiter waiter = waiter(target, Thread.currentThread());
		String lockPath = lockPath(target.key());
		checkStarted(lockPath, target.mode());
		waiter.waitNanos = bound(waiter, target);
		long deadline = System.nanoTime() + waiter.waitNanos;
		start(lockPath, waiter, target.permits());
		return this.grants.await(waiter, lockPath, deadline);
	}

	/**
	 * Acquire a lock for an asynchronous grant without a thread: the request queues in the key's
	 * local queue (see {@link LockKey}) and its znode is acquired through Curator's background
	 * callbacks and a watch. The grant is bound to no thread; the future completes on Curator's
	 * event thread, or on the thread that released the grant before it. Never returns {@code null}.
	 */
	@Override
	public CompletableFuture<Optional<RegistryGrant>> submit(LockTarget target) {
		Waiter waiter = waiter(target, null);
		String lockPath = lockPath(target.key());
		checkStarted(lockPath, target.mode());
		if (!waiter.forever) {
			waiter.waitNanos = bound(waiter, target);
			waiter.deadline = this.grants.schedule(() -> this.grants.timeOut(waiter, lockPath), waiter.waitNanos);
		}
		start(lockPath, waiter, target.permits());
		return waiter;
	}

	/** Refuse a request to a closed client at once, rather than let it wait for a connection. */
	private void checkStarted(String lockPath, LockMode mode) {
		CuratorFrameworkState state = this.client.getState();
		if (state != CuratorFrameworkState.STARTED) {
			throw new LockException("Could not acquire " + mode + " lock '" + lockPath + "': the Curator client is "
					+ state, new IllegalStateException("Expected the Curator client STARTED, it is " + state));
		}
	}

	private Waiter waiter(LockTarget target, @Nullable Thread caller) {
		Duration waitTime = target.waitTime();
		Protocol protocol = Protocol.of(target.mode(), target.reentrant(), target.permits());
		Waiter waiter = new Waiter(caller, target.mode(), protocol,
				target.isPermit() ? target.permits() : target.reentrant() ? 0 : 1, waitTime.isZero(),
				RequestRules.waitsForever(waitTime), target.lockAtMostFor());
		Boolean keep = target.keep();
		waiter.keep = (protocol == Protocol.MUTEX || protocol == Protocol.WRITE)
				&& ((keep != null) ? keep : this.grants.keptLocks().enabled());
		return waiter;
	}

	/** How long a request may wait, in nanoseconds: its wait time, or the connection timeout for one attempt. */
	private long bound(Waiter waiter, LockTarget target) {
		return waiter.oneAttempt
				? TimeUnit.MILLISECONDS.toNanos(this.client.getZookeeperClient().getConnectionTimeoutMs())
				: target.waitTime().toNanos();
	}

	/** Queue a request, after checking a semaphore's number of permits. */
	private void start(String lockPath, Waiter waiter, int permits) {
		if (permits == 0) {
			this.grants.submit(lockPath, waiter);
			return;
		}
		this.checkedPermits.check(lockPath, permits).whenComplete((checked, ex) -> {
			if (ex != null) {
				waiter.completeExceptionally(ZooKeeperFailures.translateAcquisition(ex, lockPath, waiter.mode,
						this.client));
			}
			else {
				this.grants.submit(lockPath, waiter);
			}
		});
	}

	private long readCzxid(String node, String lockPath, LockMode mode) {
		Stat stat;
		try {
			stat = this.client.checkExists().forPath(node);
		}
		catch (Exception ex) {
			throw ZooKeeperFailures.translate(ex, "read the fencing token of", lockPath, mode, this.client);
		}
		if (stat == null) {
			throw new LockLostException(lockPath, mode, "its znode " + node + " no longer exists");
		}
		return stat.getCzxid();
	}

	/**
	 * Return the znode path of a key: the root path joined with it. Sends no request.
	 * @param key the key, starting with {@code /}
	 * @return the lock path
	 * @throws InvalidLockPathException if the key is not a legal ZooKeeper path, or the lock path
	 * is longer than {@link #MAX_PATH_LENGTH}
	 */
	@Override
	public String lockPath(String key) {
		return LockPaths.lockPath(this.rootPath, key);
	}

	/**
	 * Return the condition queues of this registry's locks: a waiter is an ephemeral sequential
	 * {@code waiter-} znode in a container {@code condition} below the lock path, which a signal deletes (see
	 * {@link io.github.zklock.spi.LockCondition} for the contract and the requests).
	 * @return the condition queues
	 */
	@Override
	public LockConditions conditions() {
		return this.conditions;
	}

	/**
	 * Add a listener told when a held lock goes in doubt, is regained or is lost. Listeners are
	 * called in the order they were added, on Curator's connection-state thread (a revocation's or
	 * a ceiling's, on the thread that learned of it).
	 * @param listener the listener
	 */
	public void addLockStateListener(LockStateListener listener) {
		this.heldLocks.addListener(Objects.requireNonNull(listener, "listener must not be null"));
	}

	/**
	 * Set whether to interrupt the thread that acquired a lock when the lock is lost, so that
	 * blocking work under the lock stops early. Off by default. Only grants bound to their thread
	 * are concerned (reentrant EXCLUSIVE, READ, WRITE): a non-reentrant lock or a permit may be
	 * used or kept (lockAtLeastFor) while the thread that acquired it does other work, so its loss
	 * is reported to listeners, in its state and through {@code whenLost()}.
	 * @param interruptOnLost whether to interrupt holders of lost locks
	 */
	public void setInterruptOnLost(boolean interruptOnLost) {
		this.heldLocks.setInterruptOnLost(interruptOnLost);
	}

	/**
	 * Set how a held exclusive lock is handed to the next waiting request of this application (see
	 * {@link LocalHandoff}). {@link LocalHandoff#DEFAULT} unless set. Applies from the next
	 * decision on.
	 * @param localHandoff the hand-off settings
	 */
	public void setLocalHandoff(LocalHandoff localHandoff) {
		this.grants.handoff(Objects.requireNonNull(localHandoff, "localHandoff must not be null"));
	}

	/**
	 * Return how a held exclusive lock is handed to the next waiting request of this application.
	 * @return the hand-off settings
	 */
	public LocalHandoff getLocalHandoff() {
		return this.grants.handoff();
	}

	/**
	 * Set whether, and within which bounds, the znode of an exclusive key stays with this
	 * application after its last local grant ends (see {@link KeptLocks}).
	 * {@link KeptLocks#DISABLED} unless set. Applies to requests queued from now on; znodes kept
	 * already are kept within the new bounds.
	 * @param keptLocks the settings
	 */
	public void setKeptLocks(KeptLocks keptLocks) {
		this.grants.keptLocks(Objects.requireNonNull(keptLocks, "keptLocks must not be null"));
	}

	/**
	 * Return whether, and within which bounds, this registry keeps znodes.
	 * @return the settings
	 */
	public KeptLocks getKeptLocks() {
		return this.grants.keptLocks();
	}

	/**
	 * Set how often this application checks its held grants for revocation (see
	 * {@link CuratorLockAdmin#revoke(String, RevocationMode, Duration)}): every interval, the znode of each grant held
	 * longer than the interval gets a data watch (one getData per znode and session, in the
	 * background), through which a revocation mark or a deletion of the znode makes the grant
	 * LOST. Grants released within the interval send nothing for it.
	 * {@link #DEFAULT_REVOCATION_CHECK_INTERVAL} unless set.
	 * @param interval the interval; {@link Duration#ZERO} to ignore revocations
	 * @throws IllegalArgumentException if the interval is negative
	 */
	public void setRevocationCheckInterval(Duration interval) {
		this.revocations.setInterval(Objects.requireNonNull(interval, "interval must not be null"));
	}

	/**
	 * Return how often this application checks its held grants for revocation.
	 * @return the interval, {@link Duration#ZERO} when revocations are ignored
	 */
	public Duration getRevocationCheckInterval() {
		return this.revocations.getInterval();
	}

	/**
	 * Return the root path below which lock paths live.
	 * @return the root path
	 */
	public String getRootPath() {
		return this.rootPath;
	}

	/**
	 * Stop tracking the connection state and checking for revocations and ceilings. Kept znodes
	 * (see {@link KeptLocks}) are deleted first, waiting for the answers at most the client's
	 * connection timeout, so that other participants do not wait for the session to end. Grants
	 * still held stay valid until released or until the client is closed.
	 */
	@Override
	public void close() {
		CompletableFuture<Void> deleted = this.grants.giveUpKept(KeptKeys.Cause.CLOSED);
		if (this.client.getZookeeperClient().isConnected()) {
			try {
				deleted.get(this.client.getZookeeperClient().getConnectionTimeoutMs(), TimeUnit.MILLISECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			catch (ExecutionException | TimeoutException ex) {
				// Curator's guaranteed delete goes on, or the session's end deletes them.
			}
		}
		this.timer.shutdownNow();
		this.checkedPermits.close();
		this.revocations.close();
		this.client.getConnectionStateListenable().removeListener(this.connectionWatch);
	}

	CuratorFramework client() {
		return this.client;
	}

	/** The grants held now, for {@link CuratorLockAdmin}. */
	HeldLocks held() {
		return this.heldLocks;
	}

	/** The keys and their queues, for {@link CuratorLockAdmin}. */
	Grants grants() {
		return this.grants;
	}

	/**
	 * Return which ZooKeeper handle the client uses now. Curator creates a new handle, and with it
	 * a new session, only when the session expired (or the ensemble changed), so grants made under
	 * the current index still have their ephemeral znodes. Read locally, without taking Curator's
	 * queued background exceptions the way {@code getZooKeeper()} would.
	 */
	static long sessionInstance(CuratorFramework client) {
		return client.getZookeeperClient().getInstanceIndex();
	}

}
