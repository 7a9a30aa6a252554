package io.github.zklock.curator;

import java.io.Closeable;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockState;
import io.github.zklock.LockMode;
import io.github.zklock.LockRegistry;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTarget;
import io.github.zklock.LockStateListener;

/**
 * {@link LockRegistry} on Apache Curator lock recipes: EXCLUSIVE on {@code InterProcessMutex}
 * (or a one-lease {@code InterProcessSemaphoreV2}, the recipe behind
 * {@code InterProcessSemaphoreMutex}, when not reentrant), READ and WRITE on
 * {@code InterProcessReadWriteLock}, permits of a semaphore ({@link io.github.zklock.LockRequest#permit(String, int)})
 * on {@code InterProcessSemaphoreV2} with that many leases, the number being stored with the key
 * so that participants naming another one fail (see {@link io.github.zklock.PermitsMismatchException}).
 * The locks follow the lock recipe of the ZooKeeper recipes page:
 * ephemeral sequential znodes below the lock path, each waiter watching only its predecessor (no
 * herd effect), with Curator's protected names making the create recoverable after a connection
 * loss.
 *
 * <p>Recipe instances are kept per (key, kind) in a bounded cache that never evicts an instance
 * being waited on or held. A thread uses one instance per (key, kind) for all its nested grants
 * (Curator tracks reentrancy per instance); threads waiting at the same time use one instance
 * each, so that a hand-over wakes only the successor, as in the recipe between processes. At most
 * two threads of the application queue in ZooKeeper for one EXCLUSIVE or WRITE lock (the holder and
 * its successor); the others wait in a fair local queue, within their wait time (see
 * {@code RecipeCache}). Held grants follow the connection state (see {@link LockHandle#isHeld()}).
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

	private static final Log logger = LogFactory.getLog(CuratorLockRegistry.class);

	private final CuratorFramework client;

	private final String rootPath;

	private final RecipeCache recipes;

	private final HeldLocks heldLocks = new HeldLocks();

	private final Revocations revocations;

	private volatile LocalHandoff localHandoff = LocalHandoff.DEFAULT;

	/** The asynchronous chains of EXCLUSIVE (reentrant) and WRITE requests, by lock path and side, while in use. */
	private final ConcurrentHashMap<ChainKey, AsyncChain> asyncChains = new ConcurrentHashMap<>();

	/** The asynchronous requests with a znode of their own (READ, leases) waiting, for the operators' view. */
	private final Set<AsyncSingle> asyncSingles = ConcurrentHashMap.newKeySet();

	private final CheckedPermits checkedPermits;

	/** Ends the waits of asynchronous grants whose wait time runs out: one daemon thread. */
	private final ScheduledThreadPoolExecutor timer;

	private final ZnodeQueue znodeQueue;

	/**
	 * Create a registry and start tracking the client's connection state.
	 * @param client a Curator client (started before the first lock request)
	 * @param rootPath the znode below which lock paths live, for example {@code /locks}
	 * @param cacheCapacity how many keys (per kind) to keep cached when idle; keys waited on or
	 * held are kept beyond it
	 * @throws InvalidLockPathException if the root path is not a legal ZooKeeper path
	 * @throws IllegalArgumentException if the capacity is not positive
	 */
	public CuratorLockRegistry(CuratorFramework client, String rootPath, int cacheCapacity) {
		this.client = Objects.requireNonNull(client, "client must not be null");
		this.rootPath = LockPaths.validRootPath(rootPath);
		this.recipes = new RecipeCache(cacheCapacity, this::lockPath,
				(lockPath, key) -> LockRecipe.create(client, lockPath, key.kind(), key.permits()));
		client.getConnectionStateListenable().addListener(this.heldLocks);
		this.revocations = new Revocations(client, this.heldLocks, this::endChains, DEFAULT_REVOCATION_CHECK_INTERVAL);
		this.timer = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, "zk-lock-timer");
			thread.setDaemon(true);
			return thread;
		});
		this.timer.setRemoveOnCancelPolicy(true);
		this.znodeQueue = new ZnodeQueue(client, this.timer);
		this.checkedPermits = new CheckedPermits(client);
	}

	/**
	 * Acquire a lock for an asynchronous grant without a thread, in the znode protocol of the
	 * Curator recipe of its kind (see {@code ZnodeQueue}), through Curator's background callbacks
	 * and a watch: EXCLUSIVE (reentrant, {@code InterProcessMutex}) and WRITE (the write side of
	 * {@code InterProcessReadWriteLock}) requests of a key queue locally in FIFO order and share
	 * one znode in ZooKeeper, handed from one grant to the next within the local hand-off bounds
	 * (see {@code AsyncChain}); a READ request, a non-reentrant EXCLUSIVE request and a permit
	 * have a znode of their own (readers hold together; a lease, in
	 * {@code InterProcessSemaphoreV2}'s protocol, may be returned by any thread), see
	 * {@code AsyncSingle}. Synchronous requests of the key queue znodes of their own, so the two
	 * take turns through ZooKeeper's queue. Never returns {@code null}.
	 */
	@Override
	public CompletableFuture<Optional<LockHandle>> submit(LockTarget target) {
		LockRecipe.Kind kind = LockRecipe.Kind.of(target.mode(), target.reentrant(), target.permits());
		String lockPath = lockPath(target.key());
		Duration waitTime = target.waitTime();
		long waitMs = LockRequest.waitsForever(waitTime) ? -1 : waitTime.toMillis();
		if (target.mode() == LockMode.READ || kind == LockRecipe.Kind.SINGLE_LEASE
				|| kind == LockRecipe.Kind.SEMAPHORE) {
			return AsyncSingle.start(this, lockPath, target.mode(), target.permits(), waitMs, target.lockAtMostFor());
		}
		ZnodeQueue.Protocol protocol = (kind == LockRecipe.Kind.MUTEX) ? ZnodeQueue.Protocol.MUTEX
				: ZnodeQueue.Protocol.WRITE;
		return this.asyncChains
			.computeIfAbsent(new ChainKey(lockPath, protocol), (key) -> new AsyncChain(this, lockPath, protocol))
			.acquire(waitMs, target.lockAtMostFor());
	}

	/** The key of an asynchronous chain: a lock path and the side of it. */
	private record ChainKey(String lockPath, ZnodeQueue.Protocol protocol) {
	}

	@Override
	public Optional<LockHandle> tryAcquire(LockTarget target) {
		Duration waitTime = target.waitTime();
		LockMode mode = target.mode();
		// Validates the key when it is not cached yet; nothing is retained if it is invalid.
		RecipeCache.Slot slot = this.recipes.retain(target.key(),
				LockRecipe.Kind.of(mode, target.reentrant(), target.permits()), target.permits());
		String lockPath = slot.lockPath();
		// Read before acquiring: if the session changes meanwhile, the grant is treated as lost on
		// the next reconnection rather than trusted.
		long sessionInstance = sessionInstance(this.client);
		slot.waiting(new WaitingLock(lockPath, mode, Thread.currentThread().getName(),
				Instant.ofEpochMilli(System.currentTimeMillis())));
		boolean granted = false;
		try {
			long waitMs = LockRequest.waitsForever(waitTime) ? -1 : waitTime.toMillis();
			if (slot.permits() > 0 && !slot.permitsChecked()) {
				long epoch = slot.permitsCheckStarting();
				SemaphorePermits.check(this.client, lockPath, slot.permits(), slot.permitsWatcher());
				slot.permitsChecked(epoch);
			}
			slot.check(mode, waitMs);
			CuratorLockHandle outer = slot.outermost();
			if (outer != null && outer.state() == LockState.LOST) {
				// Curator would re-enter locally, without asking ZooKeeper, and the grant would look
				// held while its znode died with the session, or was revoked.
				String lost = outer.lostWithSession() ? "lost with its ZooKeeper session"
						: "lost (" + outer.lostMessage() + ")";
				throw new LockLostException(lockPath, mode, "this thread's enclosing grant of the lock was " + lost
						+ "; release it before locking again");
			}
			LocalChain chain = chainFor(slot, mode);
			LockRecipe.Grant grant = null;
			if (chain != null) {
				grant = chain.acquire(mode, waitMs, this.localHandoff);
			}
			else {
				long admitStart = System.nanoTime();
				if (slot.admit(mode, waitMs)) {
					long remainingMs = (waitMs <= 0) ? waitMs
							: Math.max(0, waitMs - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - admitStart));
					grant = slot.recipe().acquire(mode, remainingMs);
				}
			}
			if (grant == null) {
				if (!this.client.getZookeeperClient().isConnected()) {
					throw ZooKeeperFailures.lostWhileWaiting(lockPath, mode, this.client);
				}
				return Optional.empty();
			}
			// A grant nested in one of this thread's grants of the key (a re-entry, or READ under
			// WRITE) stands on the enclosing grant's znode, so on its session; a grant handed over
			// on the znode of an earlier local grant, on that znode's session.
			long grantSession;
			if (outer != null) {
				grantSession = outer.sessionInstance();
			}
			else if (grant instanceof LocalChain.ChainGrant chained
					&& chained.kind() != LocalChain.Kind.ACQUIRED) {
				grantSession = chained.link().sessionInstance;
			}
			else {
				grantSession = grantSession(grant, sessionInstance);
				if (grant instanceof LocalChain.ChainGrant chained) {
					chained.link().sessionInstance = grantSession;
				}
			}
			CuratorLockHandle handle = new CuratorLockHandle(this, slot, grant, lockPath, mode, grantSession);
			this.heldLocks.add(handle, this.client);
			granted = true;
			if (handle.state() == LockState.LOST) {
				// The session changed while this thread was granted, or the znode of the local chain
				// that handed it over was revoked: never hand out a lost grant.
				String reason = handle.lostMessage();
				handle.release();
				throw new LockLostException(lockPath, mode, "lost while it was granted (" + reason + ")");
			}
			if (outer == null) {
				slot.outermost(handle);
			}
			handle.startCeiling(target.lockAtMostFor());
			return Optional.of(handle);
		}
		catch (LockException ex) {
			throw ex;
		}
		catch (Exception ex) {
			throw ZooKeeperFailures.translate(ex, "acquire", lockPath, mode, this.client);
		}
		finally {
			slot.waiting(null);
			if (!granted) {
				this.recipes.unretain(slot);
			}
		}
	}

	/**
	 * Return the key's local hand-off to acquire through: the one whose turn this thread has (its
	 * nested requests ride its turn's znode whatever the mode), else, with hand-off on, the key's
	 * for EXCLUSIVE (reentrant) and WRITE requests; {@code null} to acquire through the slot's
	 * recipe.
	 */
	private @Nullable LocalChain chainFor(RecipeCache.Slot slot, LockMode mode) {
		LocalChain existing = slot.existingChain();
		if (existing != null && existing.heldByCurrentThread()) {
			return existing;
		}
		if (mode == LockMode.READ || !this.localHandoff.enabled()) {
			return null;
		}
		return slot.chain(this.client);
	}

	/**
	 * Return the session instance a grant belongs to. Normally the one seen before acquiring;
	 * if the session changed while this thread waited, Curator may have created the lock znode
	 * again in the new session and granted that one: then the znode's owner tells, at the cost of
	 * one {@code exists} on this rare path.
	 */
	private long grantSession(LockRecipe.Grant grant, long sessionBefore) {
		long sessionNow = sessionInstance(this.client);
		if (sessionNow == sessionBefore) {
			return sessionBefore;
		}
		try {
			Stat stat = this.client.checkExists().forPath(grant.nodePath());
			long sessionId = this.client.getZookeeperClient().getZooKeeper().getSessionId();
			boolean ownedNow = stat != null && stat.getEphemeralOwner() == sessionId
					&& sessionInstance(this.client) == sessionNow;
			return ownedNow ? sessionNow : sessionBefore;
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			// Unknown: the grant is reported lost rather than trusted.
			return sessionBefore;
		}
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
	 * Add a listener told when a held lock goes in doubt, is regained or is lost. Listeners are
	 * called in the order they were added, on Curator's connection-state thread.
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
	 * is reported to listeners and in its state only.
	 * @param interruptOnLost whether to interrupt holders of lost locks
	 */
	public void setInterruptOnLost(boolean interruptOnLost) {
		this.heldLocks.setInterruptOnLost(interruptOnLost);
	}

	/**
	 * Set how a held exclusive lock is handed to the next waiting thread of this application (see
	 * {@link LocalHandoff}). {@link LocalHandoff#DEFAULT} unless set. Applies to chains that
	 * start after the call.
	 * @param localHandoff the hand-off settings
	 */
	public void setLocalHandoff(LocalHandoff localHandoff) {
		this.localHandoff = Objects.requireNonNull(localHandoff, "localHandoff must not be null");
	}

	/**
	 * Return how a held exclusive lock is handed to the next waiting thread of this application.
	 * @return the hand-off settings
	 */
	public LocalHandoff getLocalHandoff() {
		return this.localHandoff;
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
	 * Stop tracking the connection state and checking for revocations. Grants still held stay valid until released or until
	 * the client is closed.
	 */
	@Override
	public void close() {
		this.timer.shutdownNow();
		this.checkedPermits.close();
		this.revocations.close();
		this.client.getConnectionStateListenable().removeListener(this.heldLocks);
	}

	CuratorFramework client() {
		return this.client;
	}

	/** The grants held now, for {@link CuratorLockAdmin}. */
	HeldLocks held() {
		return this.heldLocks;
	}

	/** The recipe cache, for {@link CuratorLockAdmin}. */
	RecipeCache recipes() {
		return this.recipes;
	}

	/** The timer of asynchronous waits, for {@link AsyncChain}. */
	ScheduledExecutorService timer() {
		return this.timer;
	}

	/** The non-blocking queue of lock znodes, for {@link AsyncChain}. */
	ZnodeQueue znodeQueue() {
		return this.znodeQueue;
	}

	/** A new grant made without a thread, not yet tracked. */
	CuratorLockHandle asyncGrant(AsyncRelease chain, LockRecipe.Grant grant, String lockPath, LockMode mode,
			long sessionInstance, boolean handedOver) {
		return new CuratorLockHandle(this, chain, grant, lockPath, mode, sessionInstance, handedOver);
	}

	/** The permits checked for asynchronous permit requests, for {@link AsyncSingle}. */
	CheckedPermits checkedPermits() {
		return this.checkedPermits;
	}

	/** Note an asynchronous request with a znode of its own as waiting, or no longer. */
	void waiting(AsyncSingle request, boolean waiting) {
		if (waiting) {
			this.asyncSingles.add(request);
		}
		else {
			this.asyncSingles.remove(request);
		}
	}

	/**
	 * Hand a new grant made without a thread to its request: tracked (connection state,
	 * revocation, the operators' view), then given to the request; released instead when it was
	 * lost while it was granted, or the request was cancelled meanwhile.
	 */
	void handOut(CuratorLockHandle handle, CompletableFuture<Optional<LockHandle>> request, Duration lockAtMostFor) {
		this.heldLocks.add(handle, this.client);
		if (handle.state() == LockState.LOST) {
			String reason = handle.lostMessage();
			handle.release();
			request.completeExceptionally(new LockLostException(handle.path(), handle.mode(),
					"lost while it was granted (" + reason + ")"));
			return;
		}
		handle.startCeiling(lockAtMostFor);
		if (!request.complete(Optional.of(new AsyncGrantHandle(handle)))) {
			handle.release();
		}
	}

	/**
	 * Schedule the end of a grant by its ceiling, on the revocation thread (which also runs the
	 * listeners a revocation tells).
	 * @return the scheduled task, {@code null} once the registry is closed (the grant keeps no
	 * ceiling then: its application is shutting down)
	 */
	@Nullable ScheduledFuture<?> scheduleCeiling(Runnable task, long delayNanos) {
		return this.revocations.schedule(task, delayNanos);
	}

	/**
	 * End a grant whose ceiling (lockAtMostFor) passed, as a revocation does: every grant on its
	 * znode becomes LOST with the reason, the work of grants owned by no thread is told
	 * ({@code whenLost()}), a local chain hands no more grants on the znode, and the znode is
	 * deleted (guaranteed, in the background) so that the next waiter is granted.
	 */
	void endByCeiling(CuratorLockHandle handle, String reason) {
		this.revocations.end(handle.nodePath(), reason, true);
	}

	/** A grant made without a thread was released: its chain hands the key on, or its own znode is deleted. */
	void released(CuratorLockHandle handle, AsyncRelease chain) {
		this.heldLocks.remove(handle);
		chain.released(handle);
	}

	/** Forget a chain that keeps nothing; a request racing with this makes a new one. */
	void dropIfIdle(AsyncChain chain) {
		this.asyncChains.computeIfPresent(new ChainKey(chain.lockPath(), chain.protocol()),
				(key, current) -> (current == chain && chain.idle()) ? null : current);
	}

	/** The asynchronous requests waiting, for {@link CuratorLockAdmin}. */
	List<WaitingLock> asyncWaiting() {
		List<WaitingLock> waiting = new ArrayList<>();
		for (AsyncChain chain : this.asyncChains.values()) {
			waiting.addAll(chain.waiting());
		}
		for (AsyncSingle request : this.asyncSingles) {
			waiting.add(request.waiting());
		}
		return waiting;
	}

	/** Make the local chains (of threads and of asynchronous grants) that keep a znode hand no further grant on it. */
	private boolean endChains(String node, String reason) {
		boolean kept = this.recipes.endChains(node, reason);
		String lockPath = ZKPaths.getPathAndNode(node).getPath();
		for (ZnodeQueue.Protocol protocol : List.of(ZnodeQueue.Protocol.MUTEX, ZnodeQueue.Protocol.WRITE)) {
			AsyncChain chain = this.asyncChains.get(new ChainKey(lockPath, protocol));
			kept |= chain != null && chain.endLink(node, reason);
		}
		return kept;
	}

	void release(CuratorLockHandle handle, RecipeCache.Slot slot, LockRecipe.Grant grant) {
		try {
			grant.release();
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			// Curator retries the delete in the background (guaranteed delete); if the session
			// ends first, ZooKeeper removes the ephemeral znode with it.
			if (this.client.getState() == CuratorFrameworkState.STOPPED) {
				// Closing the client closed the session: the znode is already gone (a release
				// delayed by lockAtLeastFor past the application's shutdown, say).
				logger.debug("Released " + handle + " with its session: the client is closed");
			}
			else {
				logger.warn("Failed to release " + handle + "; Curator deletes its znode once reconnected "
						+ "(guaranteed delete), or ZooKeeper when the session ends", ex);
			}
		}
		finally {
			this.heldLocks.remove(handle);
			slot.released(handle);
			this.recipes.unretain(slot);
		}
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
