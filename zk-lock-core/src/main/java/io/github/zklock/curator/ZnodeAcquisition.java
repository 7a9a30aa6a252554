package io.github.zklock.curator;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.jspecify.annotations.Nullable;

/**
 * The life of one lock znode, from its create to its delete, in the {@link Protocol} of a Curator
 * lock recipe, driven by the answers of {@link Znodes} with no thread waiting: create an ephemeral
 * sequential znode (protected, parents as containers) and list the queue in the same breath
 * (ZooKeeper serves a session's requests in order, so the listing sees the new znode: one round
 * trip); granted when the protocol says so, else watch the one znode it names (no herd effect) and
 * list again when that one changes. A lease takes the semaphore's internal mutex first, an
 * acquisition of its own, and ends it once the lease is granted or given up, as
 * {@code InterProcessSemaphoreV2} does.
 *
 * <p>States, each changed under the acquisition's monitor; requests are sent and the owner told
 * after it is released:
 * <pre>
 * state            event                                   next      sends, tells
 * NEW              start, a lease                          MUTEX     starts the internal mutex
 * NEW, MUTEX       start, internal mutex granted           CREATING  create, children (pipelined); a lease whose mutex
 *                                                                   created the semaphore's path creates its parents first
 * CREATING         create resent (parents were missing)    CREATING  children (pipelined after it)
 * CREATING         created                                 CREATING  children again if no listing sent with a create is on its way
 * CREATING/WAITING listing: granted                        GRANTED   ends the internal mutex; tells the owner once its delete answered
 * CREATING/WAITING listing: granted, answered late         same      children again (a pause may have cost the session)
 * CREATING/WAITING listing: not granted, one look          ENDED     delete; tells the owner (not granted) once answered
 * CREATING/WAITING listing: not granted                    WAITING   watch on the predecessor (a lease: the listing's watch);
 *                                                                   from now on it has seen the lock held
 * WAITING          watched znode gone or changed           WAITING   children
 * WAITING          watched znode gone: its own predecessor WAITING   exists of its own znode (see below)
 *                  that was granted
 * WAITING          exists: its znode there, in time        GRANTED   as a listing that grants
 * WAITING          exists: its znode there, late           WAITING   children
 * WAITING          exists: its znode gone, or an error     ENDED     as a listing that does not show it
 * all but ENDED    error answer, session expired           ENDED     delete if created; tells the owner (failed)
 * all but ENDED    end()                                   ENDED     delete once the path is known; ends the internal mutex
 * ENDED            created (late)                          ENDED     delete
 * </pre>
 * The owner is told once, of a grant, of a wait that ended without one, or of a failure; never of
 * its own {@link #end()}. {@link #end()} is the only place that deletes the znode, and deletes it
 * once, whatever ends it: a release, a wait given up, a revocation, a ceiling, a lost session.
 * The delete is sent before the owner hears that the wait ended, so that its next attempt on the
 * same session never finds this znode in its listing.
 *
 * <p>A queue of this application's own waiters (the internal mutexes of many lease requests on one
 * semaphore, say) drains without a listing per waiter: when the znode a waiter watches, the one
 * just before its own in the last listing, is another acquisition of this application
 * ({@link OwnZnodes}) that was granted, and is deleted, the waiter is first. ZooKeeper numbers a
 * queue's znodes in the order of their creates, so no znode can come before a granted one, nor
 * between the two, afterwards. The waiter only confirms that its own znode is still there (its
 * session alive), answered in time as a granting listing must be: one {@code exists} of one znode
 * instead of a listing of the whole queue, so that draining n waiters costs n small requests, not
 * n listings of up to n names each (which the recipes' loop sends, {@code LockInternals}). The
 * znodes and watches are the recipe's: only how the waiter learns that it is first changes.
 *
 * <p>Thread-safe: answers arrive on the client's event thread, {@link #end()} from any thread.
 */
final class ZnodeAcquisition implements Watcher {

	/** Where an acquisition stands; see the type's table. */
	enum State {

		NEW, MUTEX, CREATING, WAITING, GRANTED, ENDED

	}

	private static final int OK = KeeperException.Code.OK.intValue();

	private static final int NONODE = KeeperException.Code.NONODE.intValue();

	private static final CompletableFuture<Void> NOTHING_TO_DELETE = CompletableFuture.completedFuture(null);

	/** A session instance that no client has: the znode's session is not known. */
	static final long UNKNOWN_SESSION = Long.MIN_VALUE;

	private final Znodes znodes;

	private final String lockPath;

	private final Protocol protocol;

	private final int maxLeases;

	private final boolean oneLook;

	private final Consumer<ZnodeAcquisition> owner;

	/** This application's acquisitions by znode, shared by the registry's. */
	private final OwnZnodes own;

	/** The registry's clock, in nanoseconds. */
	private final LongSupplier clock;

	/** When the listing that granted the znode answered, by {@link #clock}. */
	private long grantedAt;

	/** The session instance the create was sent in, {@link #UNKNOWN_SESSION} if it changed before the answer. */
	private long session = UNKNOWN_SESSION;

	private State state = State.NEW;

	/** The created znode's full path, once the create answered. */
	private @Nullable String node;

	private long czxid;

	/** Whether the create found the queue path missing and created it. */
	private boolean parentsCreated;

	/**
	 * How many listings sent right after a send of the create have not answered yet: each is served
	 * after that create, so the create's answer lists again only when none is on its way.
	 */
	private int listingsWithCreate;

	/** Whether the create was sent and has not answered yet. */
	private boolean createPending;

	/** Whether another participant queued behind the znode when it was granted. */
	private boolean othersQueued;

	/** Whether a listing showed the lock held (a predecessor, or the leases taken); only ever set. */
	private boolean sawHeld;

	/** Whether the znode was granted (its listing, or its confirmed existence, showed it first); only ever set. */
	private boolean grantedOnce;

	/**
	 * The acquisition of this application whose znode is the one watched (just before this one's,
	 * of the same protocol), {@code null} when the watched znode is another participant's.
	 */
	private @Nullable ZnodeAcquisition watchedOwn;

	private boolean told;

	private @Nullable KeeperException failure;

	/** Whether the znode is created with the mark of a znode that may be kept ({@link KeptLocks}). */
	private boolean keepable;

	/** Schedules the end of a one-look wait for a kept predecessor; {@code null}: no such wait. */
	private KeptKeys.@Nullable Timer keptTimer;

	/** How long a one-look acquisition waits for a predecessor that may be kept to be given up. */
	private long keptWaitNanos;

	/** Whether it waited for a predecessor that may be kept, once: the next listing is its last look. */
	private boolean keptWaited;

	/**
	 * The children watch every listing of a keepable znode sets (see {@link #watchChildren}), or
	 * {@code null} for a znode that is not keepable; set before the acquisition starts. Volatile,
	 * not guarded: each listing reads it.
	 */
	private volatile @Nullable ChildrenWatch childrenWatch;

	/**
	 * Whether the listing that granted the znode set {@link #childrenWatch}; written under this
	 * object's monitor, read without it.
	 */
	private volatile boolean childrenWatched;

	/**
	 * Whether it waited behind a znode of another participant (not this application's): the key
	 * moved here from elsewhere, and its znode is not kept ({@link KeptLocks}); only ever set,
	 * under this object's monitor, and read without it.
	 */
	private volatile boolean waitedForOther;

	/** A lease's internal mutex, until the lease is granted or the acquisition ends. */
	private @Nullable ZnodeAcquisition internalMutex;

	/** Completes once the znode's delete was answered, or at the end when there was none to send. */
	private final CompletableFuture<Void> deleted = new CompletableFuture<>();

	/** Completes once {@link #deleted} did and a lease's internal mutex, if it had one at the end, is deleted too. */
	private final CompletableFuture<Void> ended = new CompletableFuture<>();

	/**
	 * @param lockPath the lock path, for a lease the semaphore's
	 * @param maxLeases the semaphore's number of leases, 1 for the other protocols
	 * @param oneLook whether to give up after the first listing that does not grant
	 * @param owner told once of a grant, of a wait ended without one, or of a failure
	 * @param clock the registry's clock, in nanoseconds
	 * @param own the acquisitions of this application by znode (the registry's)
	 */
	ZnodeAcquisition(Znodes znodes, String lockPath, Protocol protocol, int maxLeases, boolean oneLook,
			Consumer<ZnodeAcquisition> owner, LongSupplier clock, OwnZnodes own) {
		this.znodes = znodes;
		this.own = own;
		this.clock = clock;
		this.lockPath = lockPath;
		this.protocol = protocol;
		this.maxLeases = maxLeases;
		this.oneLook = oneLook;
		this.owner = owner;
	}

	/**
	 * Set the rules of kept locks, before {@link #start()}: whether the znode may be kept (its name
	 * then carries {@link Protocol#KEEP_MARK}, which other participants read), and, for a one-look
	 * acquisition, how long it waits for a predecessor carrying the mark to be given up before it
	 * answers not granted (the other application deletes a kept znode when it sees this one queue;
	 * a znode that is held, not kept, stays, and the answer is not granted after the wait).
	 * @param keepable whether the znode may be kept
	 * @param timer schedules the end of that wait
	 * @param waitNanos how long it waits
	 */
	void keptRules(boolean keepable, KeptKeys.Timer timer, long waitNanos) {
		synchronized (this) {
			this.keepable = keepable;
			this.childrenWatch = (keepable && this.protocol != Protocol.LEASE) ? new ChildrenWatch() : null;
			this.keptTimer = timer;
			this.keptWaitNanos = waitNanos;
		}
	}

	/** Whether the znode is created with the mark of a znode that may be kept. */
	synchronized boolean keepable() {
		return this.keepable;
	}

	/** Send the first requests. Call once, outside the owner's monitor. */
	void start() {
		ZnodeAcquisition mutex = null;
		synchronized (this) {
			if (this.state != State.NEW) {
				return;
			}
			if (this.protocol == Protocol.LEASE) {
				mutex = new ZnodeAcquisition(this.znodes, this.lockPath + "/" + Protocol.LOCKS, Protocol.MUTEX, 1,
						this.oneLook, this::internalMutexDecided, this.clock, this.own);
				this.internalMutex = mutex;
				this.state = State.MUTEX;
			}
			else {
				this.state = State.CREATING;
				this.listingsWithCreate = 1;
			}
		}
		if (mutex != null) {
			mutex.start();
		}
		else {
			sendCreate(false);
		}
	}

	private void internalMutexDecided(ZnodeAcquisition mutex) {
		boolean create = false;
		synchronized (this) {
			if (this.state == State.MUTEX && mutex.granted()) {
				this.state = State.CREATING;
				this.listingsWithCreate = 1;
				create = true;
			}
		}
		if (create) {
			// The internal mutex found the semaphore's path missing: so are its leases.
			sendCreate(mutex.parentsCreated());
		}
		else if (mutex.granted()) {
			// Ended meanwhile.
			mutex.end();
		}
		else if (mutex.failure != null) {
			fail(mutex.failure);
		}
		else {
			notGranted();
		}
	}

	/** @param parentMissing whether the queue path is known to be missing (its parents are created first) */
	private void sendCreate(boolean parentMissing) {
		String queuePath = this.protocol.queuePath(this.lockPath);
		long sessionAtSend = this.znodes.sessionInstance();
		String name;
		synchronized (this) {
			this.session = sessionAtSend;
			this.createPending = true;
			name = this.keepable ? Protocol.KEEP_MARK + this.protocol.lockName() : this.protocol.lockName();
		}
		this.znodes.create(queuePath + "/" + name, parentMissing, this::resent, this::created);
		list(true);
	}

	/** The create was sent again after its missing parents' creates: list right after it. */
	private void resent() {
		synchronized (this) {
			this.listingsWithCreate++;
		}
		list(true);
	}

	private void created(int code, Znodes.@Nullable Created created) {
		long sessionNow = this.znodes.sessionInstance();
		boolean ended;
		boolean listAgain = false;
		synchronized (this) {
			this.createPending = false;
			ended = this.state == State.ENDED;
			if (created == null || code != OK) {
				created = null;
				if (!ended) {
					this.failure = KeeperException.create(KeeperException.Code.get(code), this.lockPath);
				}
			}
			else if (!ended) {
				this.node = created.path();
				this.czxid = created.czxid();
				this.parentsCreated = created.parentsCreated();
				if (this.protocol == Protocol.MUTEX || this.protocol == Protocol.WRITE) {
					this.own.add(created.path(), this);
				}
				if (this.session != sessionNow) {
					// Which session the znode belongs to is no longer known: its grant is reported lost.
					this.session = UNKNOWN_SESSION;
				}
				// Every listing sent with the create answered before the znode existed (a connection
				// loss, say, which Curator's protected create recovered from).
				listAgain = this.listingsWithCreate == 0;
			}
		}
		if (created == null) {
			if (ended) {
				// Nothing was created (Curator's protected-create recovery deletes what it may have made).
				this.deleted.complete(null);
			}
			else {
				endNow(true);
			}
		}
		else if (ended) {
			// Ended while the create was on its way: its answer is the first moment the path is known.
			delete(created.path());
		}
		else if (listAgain) {
			list(false);
		}
	}

	/** @param first whether the listing is sent right after a send of the create */
	private void list(boolean first) {
		Watcher watcher = (this.protocol == Protocol.LEASE) ? this : this.childrenWatch;
		long sentAt = this.clock.getAsLong();
		this.znodes.children(this.protocol.queuePath(this.lockPath), watcher,
				(code, children) -> listed(code, children, first, sentAt));
	}

	/**
	 * Whether a listing that shows the znode granted answers late: half the negotiated session
	 * timeout or more after it was sent. The process may have been paused meanwhile, its session
	 * expired and the lock granted to another client that the server has not told this one about:
	 * such an answer grants nothing; the queue is listed again (a request in an expired session
	 * fails, so a grant is only made on an answer in a live one), as a local hand-off is bounded.
	 */
	private boolean late(long sentAt, long now) {
		long sessionTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(this.znodes.sessionTimeoutMs());
		return sessionTimeoutNanos > 0 && now - sentAt >= sessionTimeoutNanos / 2;
	}

	private void listed(int code, @Nullable List<String> children, boolean first, long sentAt) {
		String watch = null;
		Listing outcome;
		long now = this.clock.getAsLong();
		synchronized (this) {
			if (first) {
				this.listingsWithCreate--;
			}
			String ours = this.node;
			if ((this.state != State.CREATING && this.state != State.WAITING) || ours == null) {
				// Ended, or not created yet: the create's answer lists again.
				return;
			}
			String ourName = ours.substring(ours.lastIndexOf('/') + 1);
			if (code != OK || children == null || !children.contains(ourName)) {
				// A listing sent with the create may have been served without the znode (a
				// connection loss between them); a later one means the znode is gone (with its
				// session, or deleted).
				outcome = first ? Listing.AGAIN : Listing.GONE;
			}
			else {
				watch = this.protocol.predecessor(children, ourName, this.maxLeases);
				if (watch == null && late(sentAt, now)) {
					outcome = Listing.AGAIN;
				}
				else if (watch == null) {
					this.state = State.GRANTED;
					this.grantedAt = now;
					this.othersQueued = Protocol.participants(children) > 1;
					this.grantedOnce = true;
					// Every event of the watch that came before this answer was told before it.
					this.childrenWatched = this.childrenWatch != null;
					outcome = Listing.GRANTED;
				}
				else if (this.oneLook && !this.keptWaited && this.keptTimer != null && this.protocol != Protocol.LEASE
						&& Protocol.mayBeKept(watch) && this.protocol.first(children, watch)) {
					// Behind nothing but a znode that may be kept (another application's, or this one's
					// WRITE before its READ): wait a little for it to be given up (its keeper deletes it
					// on seeing this one queue), then look once more.
					this.keptWaited = true;
					this.sawHeld = true;
					this.waitedForOther |= this.own.get(this.protocol.queuePath(this.lockPath) + "/" + watch) == null;
					this.state = State.WAITING;
					outcome = Listing.WAIT_KEPT;
				}
				else if (this.oneLook) {
					this.sawHeld = true;
					outcome = Listing.NOT_GRANTED;
				}
				else {
					this.state = State.WAITING;
					this.sawHeld = true;
					// A lease waits for the listing's own watch: a lease came or went.
					outcome = (this.protocol == Protocol.LEASE) ? Listing.WAIT : Listing.WATCH;
					ZnodeAcquisition predecessor = this.own.get(this.protocol.queuePath(this.lockPath) + "/" + watch);
					this.watchedOwn = (predecessor != null && predecessor.protocol == this.protocol) ? predecessor : null;
					this.waitedForOther |= predecessor == null;
				}
			}
		}
		switch (outcome) {
			case GRANTED -> tellGranted();
			case AGAIN -> list(false);
			case GONE -> fail(KeeperException.create(
					(code != OK) ? KeeperException.Code.get(code) : KeeperException.Code.NONODE, this.lockPath));
			case NOT_GRANTED -> notGranted();
			case WATCH -> this.znodes.watch(this.protocol.queuePath(this.lockPath) + "/" + watch, this,
					this::watchSet);
			case WAIT_KEPT -> {
				KeptKeys.Timer timer;
				long waitNanos;
				synchronized (this) {
					timer = this.keptTimer;
					waitNanos = this.keptWaitNanos;
				}
				if (timer == null || timer.schedule(this::keptWaitOver, waitNanos) == null) {
					keptWaitOver();
				}
				else {
					this.znodes.watch(this.protocol.queuePath(this.lockPath) + "/" + watch, this, this::watchSet);
				}
			}
			case WAIT -> {
			}
		}
	}

	/** The wait for a predecessor that may be kept is over: not granted, unless decided meanwhile. */
	private void keptWaitOver() {
		if (endNow(false, State.WAITING)) {
			this.ended.whenComplete((ignored, ex) -> tell());
		}
	}

	/**
	 * Tell the owner of the grant once the internal mutex's delete was answered, as the recipe
	 * releases it before it returns: a one-look request of another client, asked after this grant,
	 * never finds the mutex and answers "busy" while a lease is free.
	 */
	private void tellGranted() {
		endInternalMutex().whenComplete((ignored, ex) -> tell());
	}

	/** What a listing of the queue came to. */
	private enum Listing {

		GRANTED, AGAIN, GONE, NOT_GRANTED, WATCH, WAIT, WAIT_KEPT

	}

	private void watchSet(int code, @Nullable Boolean exists) {
		if (code == OK && Boolean.FALSE.equals(exists) || code == NONODE) {
			// Gone before the watch was set: look again.
			list(false);
		}
		else if (code != OK) {
			fail(KeeperException.create(KeeperException.Code.get(code), this.lockPath));
		}
	}

	/**
	 * The watched znode changed (deleted, usually), or a lease came or went: look at the queue
	 * again. The session expired: the znode went with it, the wait fails.
	 */
	@Override
	public void process(WatchedEvent event) {
		ZnodeAcquisition predecessor;
		synchronized (this) {
			if (this.state != State.WAITING) {
				return;
			}
			predecessor = this.watchedOwn;
		}
		if (event.getType() == Event.EventType.NodeDeleted && predecessor != null
				&& Objects.equals(event.getPath(), predecessor.node()) && predecessor.grantedOnce()) {
			// This application's own predecessor, granted, is gone: first, if still there in time.
			confirmFirst();
		}
		else if (event.getType() != Event.EventType.None) {
			list(false);
		}
		else if (event.getState() == Event.KeeperState.Expired) {
			fail(KeeperException.create(KeeperException.Code.SESSIONEXPIRED, this.lockPath));
		}
	}

	/** Ask whether the znode is still there, known first since its granted predecessor is gone. */
	private void confirmFirst() {
		String ours;
		synchronized (this) {
			ours = this.node;
		}
		if (ours == null) {
			return;
		}
		long sentAt = this.clock.getAsLong();
		this.znodes.exists(ours, (code, exists) -> confirmed(code, exists, sentAt));
	}

	/** The znode known first is there (granted, unless late), or gone with its session. */
	private void confirmed(int code, @Nullable Boolean exists, long sentAt) {
		long now = this.clock.getAsLong();
		Listing outcome;
		synchronized (this) {
			if (this.state != State.WAITING) {
				return;
			}
			if (code != OK || !Boolean.TRUE.equals(exists)) {
				outcome = Listing.GONE;
			}
			else if (late(sentAt, now)) {
				outcome = Listing.AGAIN;
			}
			else {
				this.state = State.GRANTED;
				this.grantedAt = now;
				// Whether others queue behind it is not known: taken as they do (the hand-off bounds apply).
				this.othersQueued = true;
				this.grantedOnce = true;
				outcome = Listing.GRANTED;
			}
		}
		switch (outcome) {
			case GRANTED -> tellGranted();
			case AGAIN -> list(false);
			default -> fail(KeeperException.create((code != OK) ? KeeperException.Code.get(code)
					: KeeperException.Code.NONODE, this.lockPath));
		}
	}

	/**
	 * End the acquisition: give up its wait, or let go of its grant. Deletes the znode once its
	 * path is known (now, or when the create answers), ends a lease's internal mutex. Idempotent;
	 * the owner is not told.
	 * @return completes once the delete was answered, and a lease's internal mutex's too (at once
	 * when there is nothing to delete; on a failure, Curator goes on with a guaranteed delete)
	 */
	CompletableFuture<Void> end() {
		endNow(false);
		return this.ended;
	}

	/** One look, not granted: the owner is told once the deletes are answered, as the recipes return false. */
	private void notGranted() {
		endNow(false);
		this.ended.whenComplete((ignored, ex) -> tell());
	}

	private void fail(KeeperException ex) {
		synchronized (this) {
			if (this.state == State.ENDED) {
				return;
			}
			this.failure = ex;
		}
		endNow(true);
	}

	private void endNow(boolean tellOwner) {
		endNow(tellOwner, null);
	}

	/**
	 * End now, unless ended already or, with {@code onlyFrom}, in another state.
	 * @return whether this call ended it
	 */
	private boolean endNow(boolean tellOwner, @Nullable State onlyFrom) {
		String toDelete;
		boolean createPending;
		synchronized (this) {
			if (this.state == State.ENDED || (onlyFrom != null && this.state != onlyFrom)) {
				return false;
			}
			this.state = State.ENDED;
			toDelete = this.node;
			createPending = this.createPending;
			if (toDelete != null) {
				this.own.remove(toDelete, this);
			}
		}
		if (toDelete != null) {
			delete(toDelete);
		}
		else if (!createPending) {
			// Nothing created; a create still on its way is deleted when it answers.
			this.deleted.complete(null);
		}
		CompletableFuture.allOf(this.deleted, endInternalMutex()).whenComplete((ignored, ex) -> this.ended.complete(null));
		if (tellOwner) {
			tell();
		}
		return true;
	}

	private void delete(String path) {
		this.znodes.delete(path, (code, ignored) -> this.deleted.complete(null));
	}

	/** End a lease's internal mutex, if it still has one; completes once its delete was answered. */
	private CompletableFuture<Void> endInternalMutex() {
		ZnodeAcquisition mutex;
		synchronized (this) {
			mutex = this.internalMutex;
			this.internalMutex = null;
		}
		return (mutex != null) ? mutex.end() : NOTHING_TO_DELETE;
	}

	private void tell() {
		synchronized (this) {
			if (this.told) {
				return;
			}
			this.told = true;
		}
		this.owner.accept(this);
	}

	/** Whether the znode was granted at some point, ended since or not. */
	synchronized boolean grantedOnce() {
		return this.grantedOnce;
	}

	/** Whether the znode was granted (and not ended since). */
	synchronized boolean granted() {
		return this.state == State.GRANTED;
	}

	/** Where the acquisition stands. */
	synchronized State state() {
		return this.state;
	}

	/** What ended the acquisition, when it failed. */
	synchronized @Nullable KeeperException failure() {
		return this.failure;
	}

	/** The znode's full path, once created. */
	synchronized @Nullable String node() {
		return this.node;
	}

	/** Whether the create found the queue path missing and created it (a cold key). */
	synchronized boolean parentsCreated() {
		return this.parentsCreated;
	}

	/** The znode's czxid (its fencing token), 0 when the create's answer did not carry it. */
	synchronized long czxid() {
		return this.czxid;
	}

	/** The session instance the znode belongs to, {@link #UNKNOWN_SESSION} if not known. */
	synchronized long session() {
		return this.session;
	}

	/** When the listing that granted the znode answered, in the registry's clock (nanoseconds). */
	synchronized long grantedAt() {
		return this.grantedAt;
	}

	/**
	 * Whether the listing that granted the znode set a children watch on its queue, through which the
	 * znode's keeper learns that another participant queues (see {@link #watchChildren}).
	 */
	boolean childrenWatched() {
		return this.childrenWatched;
	}

	/**
	 * Where the events of the granting listing's children watch go from now on ({@link #childrenWatched}):
	 * an event that came since the grant is told at once. The watch fires once, as any ZooKeeper
	 * watch; the keeper sets its own after that.
	 * @param keeper the watcher of the granted znode's keeper
	 */
	void watchChildren(Watcher keeper) {
		ChildrenWatch watch = this.childrenWatch;
		if (watch != null) {
			watch.attach(keeper);
		}
	}

	/** Whether it waited behind a znode of another participant before it was granted. */
	boolean waitedForOther() {
		return this.waitedForOther;
	}

	/** Whether other participants queued behind the znode when it was granted. */
	synchronized boolean othersQueued() {
		return this.othersQueued;
	}

	/**
	 * Whether ZooKeeper's answers showed the lock held by another participant at some point of this
	 * acquisition: a listing with a predecessor (for a lease, no lease free, or its internal mutex
	 * held). A wait that ends without this evidence ended before ZooKeeper said anything, and is not
	 * reported as busy.
	 */
	boolean sawHeld() {
		ZnodeAcquisition mutex;
		synchronized (this) {
			if (this.sawHeld) {
				return true;
			}
			mutex = this.internalMutex;
		}
		return mutex != null && mutex.sawHeld();
	}

	/** The lock path (for a lease, the semaphore's). */
	String lockPath() {
		return this.lockPath;
	}

	@Override
	public String toString() {
		return "acquisition of " + this.protocol + " " + this.lockPath + " (" + state() + ", " + node() + ")";
	}

	/**
	 * The children watch of a keepable znode's listings: an event before the grant is left to the
	 * acquisition's own watches (the next listing sets it again); one after the grant goes to the
	 * znode's keeper, or waits for it to be attached.
	 */
	private final class ChildrenWatch implements Watcher {

		private @Nullable Watcher keeper;

		private @Nullable WatchedEvent pending;

		@Override
		public void process(WatchedEvent event) {
			Watcher target;
			synchronized (ZnodeAcquisition.this) {
				if (!ZnodeAcquisition.this.childrenWatched) {
					return;
				}
				target = this.keeper;
				if (target == null) {
					this.pending = event;
					return;
				}
			}
			target.process(event);
		}

		void attach(Watcher target) {
			WatchedEvent event;
			synchronized (ZnodeAcquisition.this) {
				this.keeper = target;
				event = this.pending;
				this.pending = null;
			}
			if (event != null) {
				target.process(event);
			}
		}

	}

}
