package io.github.zklock.curator;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.jspecify.annotations.Nullable;

/**
 * An in-memory stand-in for one application's ZooKeeper session, behind {@link Znodes}, for the
 * controlled-concurrency tests: a tree of znodes with sequential children, one-shot data and child
 * watches, ephemeral znodes of the session and of other participants, a suspended connection, and
 * session expiry.
 *
 * <p>As ZooKeeper serves one session's requests in order, each request is applied when it is sent,
 * atomically; its answer, and the watch events it fires, are delivered in that order, one at a
 * time, as the client's one event thread delivers them: by the thread that sent the request, once
 * applied, unless another thread is delivering at that moment, which then delivers these too. So an
 * answer may reach its requester's future on another thread, as it does through Curator, with no
 * event thread for the model checker to explore. What the application did is recorded for the
 * invariants: every znode it created, and how many deletes it sent for each.
 */
final class InMemoryZooKeeper implements Znodes {

	private static final int OK = KeeperException.Code.OK.intValue();

	private static final int NONODE = KeeperException.Code.NONODE.intValue();

	private static final int CONNECTIONLOSS = KeeperException.Code.CONNECTIONLOSS.intValue();

	/** The owner of znodes of another application. */
	static final long OTHER_SESSION = -1;

	private final TreeMap<String, Long> owners = new TreeMap<>();

	private final Map<String, Long> czxids = new HashMap<>();

	private final Map<String, Integer> sequences = new HashMap<>();

	private final Map<String, Set<Watcher>> dataWatches = new HashMap<>();

	private final Map<String, Set<Watcher>> childWatches = new HashMap<>();

	private final List<String> created = new ArrayList<>();

	private final Map<String, Integer> deletes = new HashMap<>();

	private long zxid;

	/** Listings sent, answered or not. */
	private final AtomicInteger listings = new AtomicInteger();

	private int protectedIds;

	private volatile long session = 1;

	private volatile boolean connected = true;

	/** Requests sent while the connection is suspended: how to apply each, how to fail it (guarded by this). */
	private final List<Runnable[]> kept = new ArrayList<>();

	/** Deletes that failed for the connection, sent again once reconnected as Curator's guaranteed delete does (guarded by this). */
	private final List<String> deletesToRetry = new ArrayList<>();

	/** The answers and events requests caused, not delivered yet, in order (guarded by this). */
	private final List<Runnable> caused = new ArrayList<>();

	/** Whether a thread delivers them now: one at a time, in order, as one event thread would. */
	private boolean delivering;

	InMemoryZooKeeper() {
		this.owners.put("/", 0L);
	}

	@Override
	public void create(String path, boolean parentMissing, Runnable resent, Answer<Created> answer) {
		// A create that times out is not applied: Curator finds or deletes a protected create cut by
		// a connection loss. Missing parents are made with the create: it is never refused for them,
		// so never sent again (the real server's refusal is tested against it).
		send(() -> {
			String parent = parentOf(path);
			makeParents(parent);
			int sequence = this.sequences.merge(parent, 1, Integer::sum) - 1;
			String name = "_c_" + (this.protectedIds++) + "-" + path.substring(path.lastIndexOf('/') + 1)
					+ sequence(sequence);
			Created node = new Created(parent + "/" + name, add(parent + "/" + name, this.session), false);
			this.created.add(node.path());
			queue(() -> answer.answer(OK, node));
		}, () -> queue(() -> answer.answer(CONNECTIONLOSS, null)));
	}

	@Override
	public void children(String path, @Nullable Watcher watcher, Answer<List<String>> answer) {
		this.listings.incrementAndGet();
		send(() -> {
			List<String> names = this.owners.containsKey(path) ? childrenOf(path) : null;
			if (names != null && watcher != null) {
				this.childWatches.computeIfAbsent(path, (key) -> new LinkedHashSet<>()).add(watcher);
			}
			queue(() -> answer.answer((names != null) ? OK : NONODE, names));
		}, () -> queue(() -> answer.answer(CONNECTIONLOSS, null)));
	}

	@Override
	public void watch(String path, Watcher watcher, Answer<Boolean> answer) {
		send(() -> {
			boolean exists = this.owners.containsKey(path);
			if (exists) {
				this.dataWatches.computeIfAbsent(path, (key) -> new LinkedHashSet<>()).add(watcher);
			}
			queue(() -> answer.answer(OK, exists));
		}, () -> queue(() -> answer.answer(CONNECTIONLOSS, null)));
	}

	/** As {@link #watch}: the model's znodes carry no revocation mark. */
	@Override
	public void watchKept(String path, Watcher watcher, Answer<Boolean> answer) {
		watch(path, watcher, answer);
	}

	@Override
	public void exists(String path, Answer<Boolean> answer) {
		send(() -> {
			boolean exists = this.owners.containsKey(path);
			queue(() -> answer.answer(OK, exists));
		}, () -> queue(() -> answer.answer(CONNECTIONLOSS, null)));
	}

	@Override
	public void delete(String path, Answer<Void> answer) {
		synchronized (this) {
			this.deletes.merge(path, 1, Integer::sum);
		}
		// Guaranteed: a delete that timed out is sent again once reconnected.
		send(() -> {
			remove(path);
			queue(() -> answer.answer(OK, null));
		}, () -> {
			this.deletesToRetry.add(path);
			queue(() -> answer.answer(CONNECTIONLOSS, null));
		});
	}

	@Override
	public void deleteOnce(String path, Answer<Void> answer) {
		send(() -> {
			// Counted only when it deleted: a signal finds waiters gone already.
			boolean there = this.owners.containsKey(path);
			if (there) {
				this.deletes.merge(path, 1, Integer::sum);
			}
			remove(path);
			queue(() -> answer.answer(there ? OK : NONODE, null));
		}, () -> queue(() -> answer.answer(CONNECTIONLOSS, null)));
	}

	/**
	 * Apply a request now, or keep it while the connection is suspended: sent once reconnected,
	 * or failed when the connection timeout passes first ({@link #connectionTimedOut()}).
	 * @param apply applies it and queues its answer (under this object's monitor)
	 * @param timedOut queues its failure (under this object's monitor)
	 */
	private void send(Runnable apply, Runnable timedOut) {
		synchronized (this) {
			if (this.connected) {
				apply.run();
			}
			else {
				this.kept.add(new Runnable[] { apply, timedOut });
			}
		}
		deliverCaused();
	}

	@Override
	public long sessionInstance() {
		return this.session;
	}

	@Override
	public boolean connected() {
		return this.connected;
	}

	@Override
	public int sessionTimeoutMs() {
		return 10_000;
	}

	@Override
	public int connectionTimeoutMs() {
		return 1_000;
	}

	/** How many listings were sent so far, answered or not. */
	int listings() {
		return this.listings.get();
	}

	/**
	 * Queue a znode of another application (it holds or waits, as its place in the queue says), and
	 * deliver the events it caused.
	 * @return its full path
	 */
	String otherParticipant(String queuePath, String lockName) {
		String path;
		synchronized (this) {
			makeParents(queuePath);
			int sequence = this.sequences.merge(queuePath, 1, Integer::sum) - 1;
			path = queuePath + "/other-" + lockName + sequence(sequence);
			add(path, OTHER_SESSION);
		}
		// The children watches its create fired, as the event thread delivers them.
		deliverCaused();
		return path;
	}

	/** How many requests are kept while the connection is suspended, sent but not applied yet. */
	synchronized int keptRequests() {
		return this.kept.size();
	}

	/** Whether the client watches the znode (a waiter watching its predecessor, say). */
	synchronized boolean watched(String path) {
		Set<Watcher> watchers = this.dataWatches.get(path);
		return watchers != null && !watchers.isEmpty();
	}

	/** Delete a znode as another client (another application's release, or a forced revocation). */
	void deleteAsOther(String path) {
		synchronized (this) {
			remove(path);
		}
		deliverCaused();
	}

	/**
	 * Expire the session: its ephemeral znodes go, every watch of the client is told, and the
	 * client continues in a new session.
	 */
	void expireSession() {
		synchronized (this) {
			long expired = this.session;
			// The session's watches end with it: its client hears of the expiry, not of the deletes
			// of its ephemeral znodes (which only other sessions' watches would see).
			Set<Watcher> watchers = new LinkedHashSet<>();
			this.dataWatches.values().forEach(watchers::addAll);
			this.childWatches.values().forEach(watchers::addAll);
			this.dataWatches.clear();
			this.childWatches.clear();
			for (String path : new ArrayList<>(this.owners.keySet())) {
				if (this.owners.get(path) == expired) {
					remove(path);
				}
			}
			for (Watcher watcher : watchers) {
				queue(() -> watcher.process(new WatchedEvent(Watcher.Event.EventType.None,
						Watcher.Event.KeeperState.Expired, null)));
			}
			this.session = expired + 1;
		}
		deliverCaused();
	}

	/**
	 * Suspend the connection: requests are kept, neither applied nor answered, until the
	 * connection is back ({@link #reconnect()}) or its timeout passes ({@link #connectionTimedOut()});
	 * the session and its watches stay.
	 */
	void suspend() {
		synchronized (this) {
			this.connected = false;
		}
	}

	/**
	 * The connection timeout passed while suspended: the requests kept fail with
	 * {@code CONNECTIONLOSS}, as Curator's background operations do once their retries ran out.
	 */
	void connectionTimedOut() {
		synchronized (this) {
			for (Runnable[] request : this.kept) {
				request[1].run();
			}
			this.kept.clear();
		}
		deliverCaused();
	}

	/**
	 * The connection is back in the same session: the deletes that failed meanwhile are sent again,
	 * then the requests kept, in order.
	 */
	void reconnect() {
		synchronized (this) {
			this.connected = true;
			for (String path : this.deletesToRetry) {
				remove(path);
			}
			this.deletesToRetry.clear();
			for (Runnable[] request : this.kept) {
				request[0].run();
			}
			this.kept.clear();
		}
		deliverCaused();
	}

	/** The znodes of the application's sessions that exist now. */
	synchronized List<String> ownZnodes() {
		List<String> own = new ArrayList<>();
		this.owners.forEach((path, owner) -> {
			if (owner > 0) {
				own.add(path);
			}
		});
		return own;
	}

	/** Every znode the application created, in order. */
	synchronized List<String> created() {
		return List.copyOf(this.created);
	}

	/** How many deletes the application sent for each znode. */
	synchronized Map<String, Integer> deletes() {
		return Map.copyOf(this.deletes);
	}

	/** The names of a znode's children, in the order of their paths. */
	synchronized List<String> childrenOf(String path) {
		List<String> names = new ArrayList<>();
		String prefix = path.equals("/") ? "/" : path + "/";
		for (String child : this.owners.subMap(prefix, prefix + Character.MAX_VALUE).keySet()) {
			if (child.indexOf('/', prefix.length()) < 0) {
				names.add(child.substring(prefix.length()));
			}
		}
		return names;
	}

	private long add(String path, long owner) {
		this.owners.put(path, owner);
		long czxid = ++this.zxid;
		this.czxids.put(path, czxid);
		fire(this.childWatches, parentOf(path), Watcher.Event.EventType.NodeChildrenChanged);
		return czxid;
	}

	private void remove(String path) {
		if (this.owners.remove(path) == null) {
			return;
		}
		fire(this.dataWatches, path, Watcher.Event.EventType.NodeDeleted);
		fire(this.childWatches, parentOf(path), Watcher.Event.EventType.NodeChildrenChanged);
	}

	private void makeParents(String path) {
		if (this.owners.containsKey(path)) {
			return;
		}
		makeParents(parentOf(path));
		this.owners.put(path, 0L);
		this.czxids.put(path, ++this.zxid);
	}

	private void fire(Map<String, Set<Watcher>> watches, String path, Watcher.Event.EventType type) {
		Set<Watcher> watchers = watches.remove(path);
		if (watchers != null) {
			for (Watcher watcher : watchers) {
				queue(() -> watcher.process(new WatchedEvent(type, Watcher.Event.KeeperState.SyncConnected, path)));
			}
		}
	}

	private void queue(Runnable event) {
		synchronized (this) {
			this.caused.add(event);
		}
	}

	/**
	 * Deliver what requests caused, on the calling thread, in order, unless another thread is
	 * delivering (it delivers these too).
	 */
	private void deliverCaused() {
		synchronized (this) {
			if (this.delivering) {
				return;
			}
			this.delivering = true;
		}
		while (true) {
			Runnable event;
			synchronized (this) {
				if (this.caused.isEmpty()) {
					this.delivering = false;
					return;
				}
				event = this.caused.remove(0);
			}
			event.run();
		}
	}

	/** A sequence number as ZooKeeper appends it: ten digits, zero-padded. */
	private static String sequence(int sequence) {
		String digits = Integer.toString(sequence);
		return "0000000000".substring(digits.length()) + digits;
	}

	private static String parentOf(String path) {
		int slash = path.lastIndexOf('/');
		return (slash <= 0) ? "/" : path.substring(0, slash);
	}

}
