package io.github.zklock.curator;

import java.io.Closeable;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.LockInternals;
import org.apache.curator.framework.recipes.locks.LockInternalsSorter;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.utils.PathUtils;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.jspecify.annotations.Nullable;

import io.github.zklock.Leadership;
import io.github.zklock.LeadershipListener;
import io.github.zklock.LockException;
import io.github.zklock.LockHandle;

/**
 * {@link Leadership} on Apache Curator's {@link LeaderLatch}, the "Leader Election" recipe of the
 * ZooKeeper recipes page: one latch per joined group at {@code basePath + "/" + group}, whose
 * ephemeral sequential znodes hold this instance's participant id. A latch is started when a group
 * is first named and closed by {@link #close()}; yielding closes it and queues again with a new one.
 *
 * <p>On top of the latch, leadership follows the connection as Curator reports it to a connection
 * state listener of this class: SUSPENDED, LOST and READ_ONLY revoke it (the latch itself drops it
 * on SUSPENDED only under Curator's default error policy, not under
 * {@code SessionConnectionStateErrorPolicy}); RECONNECTED restores it if the latch still holds it
 * and was granted in the same session (its znode survived, so it is still first), otherwise when
 * the latch grants it again: Curator checks its znode on RECONNECTED and, if it died with an
 * expired session, creates a new one at the back of the queue. A grant of an earlier session never
 * counts.
 *
 * <p>Thread-safe. Call {@link #close()} before closing the Curator client.
 */
public class CuratorLeadership implements Leadership, Closeable {

	/** The name Curator's {@code LeaderLatch} gives its znodes, before the sequence number. */
	private static final String LATCH_NODE_NAME = "latch-";

	private static final LockInternalsSorter SORTER = StandardLockInternalsDriver::standardFixForSorting;

	private final CuratorFramework client;

	private final String basePath;

	private final String participantId;

	private final Map<String, LeaderGroup> groups = new ConcurrentHashMap<>();

	private final List<LeadershipListener> listeners = new CopyOnWriteArrayList<>();

	private final ConnectionStateListener connectionListener = this::connectionStateChanged;

	private final Object lifecycle = new Object();

	/** Whether Curator last reported the connection up (CONNECTED or RECONNECTED). */
	private volatile boolean connectionUp = true;

	private volatile boolean closed;

	/**
	 * Create a leadership and start following the client's connection state. No group is joined
	 * yet and no request is sent.
	 * @param client a Curator client (started; latches start taking part once it is connected)
	 * @param basePath the znode below which each group has its latch path, for example
	 * {@code /leaders}
	 * @param participantId this instance's id in every group, for example
	 * {@link #defaultParticipantId()}
	 * @throws IllegalArgumentException if the base path is not a legal ZooKeeper path, or the
	 * participant id is {@code null} or empty
	 */
	public CuratorLeadership(CuratorFramework client, String basePath, String participantId) {
		this.client = Objects.requireNonNull(client, "client must not be null");
		try {
			this.basePath = PathUtils.validatePath(basePath);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("Invalid leadership base path '" + basePath + "': " + ex.getMessage(),
					ex);
		}
		if (participantId == null || participantId.isEmpty()) {
			throw new IllegalArgumentException("The participant id must not be null or empty");
		}
		this.participantId = participantId;
		client.getConnectionStateListenable().addListener(this.connectionListener);
	}

	/**
	 * Return the default participant id: this machine's host name, {@code /}, this process's id,
	 * for example {@code app-7f9c/4711}. The host name is looked up with
	 * {@link InetAddress#getLocalHost()} (which may ask a name service), {@code localhost} if that
	 * fails.
	 * @return the default participant id
	 */
	public static String defaultParticipantId() {
		String host;
		try {
			host = InetAddress.getLocalHost().getHostName();
		}
		catch (UnknownHostException ex) {
			host = "localhost";
		}
		return host + "/" + ProcessHandle.current().pid();
	}

	/**
	 * Add a listener told when this instance is granted or loses the leadership of a group.
	 * Listeners are called in the order they were added (see {@link LeadershipListener} for the
	 * threads).
	 * @param listener the listener
	 */
	public void addListener(LeadershipListener listener) {
		this.listeners.add(Objects.requireNonNull(listener, "listener must not be null"));
	}

	/**
	 * Take part in the group's election, if not yet: start a Curator {@code LeaderLatch} at
	 * {@code basePath + "/" + group} with this instance's participant id. Returns at once; the latch
	 * creates its znode in the background once the client is connected. Idempotent.
	 * @param group the group name
	 * @throws IllegalArgumentException if the group name is not valid (see {@link Leadership})
	 * @throws IllegalStateException if this leadership was closed
	 * @throws LockException if Curator cannot start the latch
	 */
	public void join(String group) {
		joined(group);
	}

	@Override
	public boolean isLeader(String group) {
		latchPath(group);
		if (this.closed) {
			// Shutting down: a scheduled @LeaderOnly call skips rather than fails.
			return false;
		}
		return joined(group).isLeading();
	}

	/**
	 * {@inheritDoc}
	 * <p>The term's fencing token is the czxid of this instance's {@code LeaderLatch} znode (one
	 * {@code exists} on the first call, then cached), its path the group's latch path
	 * ({@code basePath + "/" + group}); see {@link LeadershipTerm}.
	 */
	@Override
	public Optional<LockHandle> term(String group) {
		latchPath(group);
		if (this.closed) {
			return Optional.empty();
		}
		return Optional.ofNullable(joined(group).term());
	}

	@Override
	public boolean awaitLeadership(String group, Duration timeout) throws InterruptedException {
		Objects.requireNonNull(timeout, "timeout must not be null");
		if (timeout.isNegative()) {
			throw new IllegalArgumentException("The timeout must not be negative, was " + timeout);
		}
		LeaderGroup joined = joined(group);
		long timeoutNanos;
		try {
			timeoutNanos = timeout.toNanos();
		}
		catch (ArithmeticException ex) {
			timeoutNanos = Long.MAX_VALUE;
		}
		return joined.await(timeoutNanos);
	}

	@Override
	public void yieldLeadership(String group) {
		latchPath(group);
		checkOpen();
		LeaderGroup joined = this.groups.get(group);
		if (joined != null) {
			joined.yieldLeadership();
		}
	}

	@Override
	public Optional<String> getLeader(String group) {
		String latchPath = latchPath(group);
		checkOpen();
		try {
			// The recipe's order: by sequence number, the first znode that still exists leads.
			for (String node : LockInternals.getSortedChildren(this.client, latchPath, LATCH_NODE_NAME, SORTER)) {
				try {
					byte[] id = this.client.getData().forPath(ZKPaths.makePath(latchPath, node));
					return Optional.of((id != null) ? new String(id, StandardCharsets.UTF_8) : "");
				}
				catch (KeeperException.NoNodeException ex) {
					// Left between the listing and this read: the next one leads.
				}
			}
			return Optional.empty();
		}
		catch (Exception ex) {
			throw ZooKeeperFailures.translate(ex,
					"Could not read the leader of group '" + group + "' at '" + latchPath + "': ", this.client);
		}
	}

	/**
	 * {@inheritDoc}
	 * @return a snapshot of the joined groups, empty once this leadership is closed
	 */
	@Override
	public Set<String> getGroups() {
		return Set.copyOf(this.groups.keySet());
	}

	@Override
	public String getParticipantId() {
		return this.participantId;
	}

	/**
	 * Leave every group: listeners are told of the revocation for the groups this instance led,
	 * then each latch is closed (its znode deleted, in the background, so that the next participant
	 * leads), and the connection is no longer followed. Idempotent; afterwards the methods taking a
	 * group throw {@link IllegalStateException}.
	 */
	@Override
	public void close() {
		synchronized (this.lifecycle) {
			if (this.closed) {
				return;
			}
			this.closed = true;
		}
		for (LeaderGroup group : this.groups.values()) {
			group.close();
		}
		this.groups.clear();
		this.client.getConnectionStateListenable().removeListener(this.connectionListener);
	}

	private LeaderGroup joined(String group) {
		String latchPath = latchPath(group);
		checkOpen();
		LeaderGroup joined = this.groups.get(group);
		if (joined != null) {
			return joined;
		}
		synchronized (this.lifecycle) {
			checkOpen();
			joined = this.groups.get(group);
			if (joined == null) {
				joined = new LeaderGroup(this.client, group, latchPath, this.participantId, this.listeners,
						() -> this.connectionUp);
				// Listed before it starts, so that it follows every connection change.
				this.groups.put(group, joined);
				try {
					joined.start();
				}
				catch (RuntimeException ex) {
					this.groups.remove(group);
					throw ex;
				}
			}
			return joined;
		}
	}

	private void checkOpen() {
		if (this.closed) {
			throw new IllegalStateException("The leadership of participant '" + this.participantId + "' is closed");
		}
	}

	/**
	 * Check a group name and return its latch path.
	 * @throws IllegalArgumentException if the name is not a single legal path segment
	 */
	/**
	 * Check a group name: one legal ZooKeeper path segment (not empty, no {@code /}, not
	 * {@code .} or {@code ..}, no character ZooKeeper refuses in a node name, no lone surrogate).
	 * @param group the group name
	 * @return the group name
	 * @throws IllegalArgumentException if it is not a valid group name, saying why
	 */
	public static String checkGroup(@Nullable String group) {
		if (group == null || group.isEmpty()) {
			throw new IllegalArgumentException("A leadership group name must not be null or empty, was '" + group + "'");
		}
		if (group.indexOf('/') >= 0) {
			throw new IllegalArgumentException(
					"A leadership group name must be a single ZooKeeper path segment (no '/'), was '" + group + "'");
		}
		for (int i = 0; i < group.length(); i++) {
			// ZooKeeper's own check lets U+D800 through; sent as UTF-8 it would become '?'.
			if (Character.isSurrogate(group.charAt(i))) {
				throw new IllegalArgumentException(
						"Invalid leadership group name '" + group + "': surrogate character at index " + i);
			}
		}
		try {
			PathUtils.validatePath("/" + group);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("Invalid leadership group name '" + group + "': " + ex.getMessage(), ex);
		}
		return group;
	}

	private String latchPath(String group) {
		String latchPath = ZKPaths.makePath(this.basePath, checkGroup(group));
		if (latchPath.equals("/zookeeper")) {
			throw new IllegalArgumentException(
					"Invalid leadership group name '" + group + "': " + latchPath + " is reserved by ZooKeeper");
		}
		return latchPath;
	}

	private void connectionStateChanged(CuratorFramework client, ConnectionState newState) {
		// READ_ONLY (a server cut off from the quorum) cannot vouch for the session: in doubt too.
		this.connectionUp = newState == ConnectionState.CONNECTED || newState == ConnectionState.RECONNECTED;
		for (LeaderGroup group : this.groups.values()) {
			group.connectionChanged();
		}
	}

}
