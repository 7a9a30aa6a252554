package io.github.zklock.actuate;

import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.audit.listener.AuditApplicationEvent;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.core.log.LogAccessor;

import io.github.zklock.Leadership;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.HeldLock;
import io.github.zklock.curator.KeptLock;
import io.github.zklock.curator.LockOwner;
import io.github.zklock.curator.LockParticipant;
import io.github.zklock.curator.LockQueue;
import io.github.zklock.curator.Revocation;
import io.github.zklock.curator.RevocationAction;
import io.github.zklock.curator.RevocationMode;
import io.github.zklock.curator.WaitingLock;

/**
 * The {@code zklocks} actuator endpoint:
 * <ul>
 * <li>{@code GET /actuator/zklocks}: this application's process id and host, the locks it holds
 * (path, mode, state, holder thread, held since, znode, fencing token if it was read, chain
 * length, and the {@code deadline} at which its ceiling, {@code lockAtMostFor}, ends it, left out
 * for a grant without one) and the threads waiting for one, local state; with a
 * {@link Leadership}, the leader of each group the application takes part in (reads ZooKeeper,
 * one group after the other);</li>
 * <li>{@code GET /actuator/zklocks/{key}}: the participants of one key's lock across the
 * ensemble, any client and any kind, in queue order (reads ZooKeeper), for example
 * {@code /actuator/zklocks/stock/apple} for the key {@code /stock/apple}: per znode whether it
 * holds, its owner's process id and host, its creation time and fencing token, the chain length
 * of this application's held znodes; and how many wait;</li>
 * <li>{@code DELETE /actuator/zklocks/{key}} (a write operation): revoke a stuck lock (see
 * {@link CuratorLockAdmin#revoke}): by default Curator's revocation protocol asks the holders
 * to give it up (this library's holders do, their grants become LOST and the commit guard rolls
 * their transactions back), waiting up to {@value #REVOKE_WAIT_SECONDS} s for their znodes to go;
 * with {@code ?force=true} the holders' znodes are deleted. The answer says what was done.
 * Each revocation is logged at WARN and, with an {@link ApplicationEventPublisher}, published as an
 * {@link AuditApplicationEvent} of type {@value #LOCK_REVOKED} (see {@link #revoke}).</li>
 * </ul>
 * Like any Boot endpoint's, the write operation is reachable only where the endpoint is exposed;
 * {@code management.endpoint.zklocks.access=read-only} keeps the reads and refuses it. Who may call
 * which operation is the application's security configuration's to decide.
 * <p>
 * The endpoint keeps no state of its own: its operations may run on any number of threads at once.
 */
@Endpoint(id = "zklocks")
public class ZkLocksEndpoint {

	/** How long a revocation waits for the holders to give the lock up, in seconds. */
	public static final int REVOKE_WAIT_SECONDS = 5;

	/** The type of the audit event published for each revocation. */
	public static final String LOCK_REVOKED = "ZK_LOCK_REVOKED";

	/** The principal named in the audit event of a revocation made without authentication. */
	public static final String ANONYMOUS = "anonymous";

	private static final LogAccessor logger = new LogAccessor(ZkLocksEndpoint.class);

	private final CuratorLockAdmin admin;

	private final @Nullable Leadership leadership;

	private final @Nullable ApplicationEventPublisher events;

	/**
	 * Create the endpoint; its revocations are logged, not published.
	 * @param admin the operator side of the lock registry it describes
	 */
	public ZkLocksEndpoint(CuratorLockAdmin admin) {
		this(admin, null, null);
	}

	/**
	 * Create the endpoint, describing the leadership groups too; its revocations are logged, not
	 * published.
	 * @param admin the operator side of the lock registry it describes
	 * @param leadership the application's leadership, or {@code null} for none
	 */
	public ZkLocksEndpoint(CuratorLockAdmin admin, @Nullable Leadership leadership) {
		this(admin, leadership, null);
	}

	/**
	 * Create the endpoint, describing the leadership groups too and publishing an audit event for
	 * each revocation.
	 * @param admin the operator side of the lock registry it describes
	 * @param leadership the application's leadership, or {@code null} for none
	 * @param events where each revocation's {@link AuditApplicationEvent} is published (with
	 * Actuator's auditing on, Boot's {@code AuditListener} stores it in the
	 * {@code AuditEventRepository}), or {@code null} to log revocations only
	 */
	public ZkLocksEndpoint(CuratorLockAdmin admin, @Nullable Leadership leadership,
			@Nullable ApplicationEventPublisher events) {
		this.admin = admin;
		this.leadership = leadership;
		this.events = events;
	}

	/**
	 * Describe the locks this application holds and waits for, and the leader of each group it
	 * takes part in (one getChildren and one getData per group).
	 * @return the description
	 * @throws io.github.zklock.LockException if ZooKeeper cannot tell a group's leader
	 */
	@ReadOperation
	public ApplicationLocks locks() {
		List<GroupLeader> leaders = new ArrayList<>();
		if (this.leadership != null) {
			for (String group : new TreeSet<>(this.leadership.getGroups())) {
				leaders.add(new GroupLeader(group, this.leadership.getLeader(group).orElse(null),
						this.leadership.isLeader(group)));
			}
		}
		LockOwner owner = this.admin.owner();
		return new ApplicationLocks(owner.pid(), owner.host(), this.admin.registry().getRootPath(),
				this.admin.describeHeldLocks(), this.admin.describeKeptLocks(), this.admin.describeWaitingLocks(),
				leaders);
	}

	/**
	 * Describe who holds and waits for the lock of one key, across the ensemble (see
	 * {@link CuratorLockAdmin#describeQueue}).
	 * @param key the segments of the key below the root path
	 * @return the description
	 * @throws io.github.zklock.InvalidLockPathException if the segments do not form a legal key
	 * @throws io.github.zklock.LockException if ZooKeeper cannot be reached
	 */
	@ReadOperation
	public PathParticipants participants(@Selector(match = Selector.Match.ALL_REMAINING) String... key) {
		LockQueue queue = this.admin.describeQueue("/" + String.join("/", key));
		return new PathParticipants(queue.path(), queue.waiters(), queue.localWaiters(), queue.participants());
	}

	/**
	 * Revoke the lock of one key, held by any application: see {@link CuratorLockAdmin#revoke}.
	 * <p>
	 * Once done, the revocation is logged at WARN and, with an {@link ApplicationEventPublisher},
	 * published on the calling thread as an {@link AuditApplicationEvent} of type
	 * {@value #LOCK_REVOKED}, whose principal is the caller's name ({@value #ANONYMOUS} without
	 * one) and whose data are: {@code key} (as given, from the root path on: {@code /stock/apple}),
	 * {@code path} (the lock path), {@code mode} ({@code REQUEST} or {@code FORCE}, see
	 * {@link RevocationMode}), {@code action} (see {@link RevocationAction}), {@code holders} (the
	 * holders the revocation was applied to, each a map of the {@link LockParticipant} fields
	 * {@code path}, {@code kind}, {@code owner}, {@code sessionId} and {@code fencingToken}; empty
	 * for a free key) and {@code released} (whether every holder's znode was gone when the call
	 * returned: then the revocation ended them all). A revocation that fails is logged at WARN with
	 * the caller and published nowhere: it may have marked or deleted some holders' znodes before
	 * ZooKeeper failed, which a {@code GET} of the key shows.
	 * @param key the segments of the key below the root path
	 * @param force whether to delete the holders' znodes rather than ask the holders to give the
	 * lock up; {@code null} for {@code false}
	 * @param principal who asks, as Boot's web layer passes the authenticated user; {@code null}
	 * when the request is not authenticated
	 * @return what was done, with the holders found and whether their znodes were gone when the
	 * call returned
	 * @throws io.github.zklock.InvalidLockPathException if the segments do not form a legal key
	 * @throws io.github.zklock.LockException if ZooKeeper cannot be reached
	 * @throws RuntimeException whatever a listener of the audit event throws (the lock is revoked
	 * by then, and the WARN line records it)
	 */
	@DeleteOperation
	public Revocation revoke(@Selector(match = Selector.Match.ALL_REMAINING) String[] key,
			@Nullable Boolean force, @Nullable Principal principal) {
		String lockKey = "/" + String.join("/", key);
		RevocationMode mode = Boolean.TRUE.equals(force) ? RevocationMode.FORCE : RevocationMode.REQUEST;
		String caller = (principal != null) ? principal.getName() : ANONYMOUS;
		Revocation revocation;
		try {
			revocation = this.admin.revoke(lockKey, mode, Duration.ofSeconds(REVOKE_WAIT_SECONDS));
		}
		catch (RuntimeException ex) {
			logger.warn(ex, () -> "Revocation of lock key '" + lockKey + "' (" + mode + ") by " + caller
					+ " failed");
			throw ex;
		}
		audit(lockKey, mode, caller, revocation);
		return revocation;
	}

	private void audit(String key, RevocationMode mode, String caller, Revocation revocation) {
		List<Map<String, Object>> holders = revocation.holders().stream().map(ZkLocksEndpoint::describe).toList();
		logger.warn(() -> "Lock '" + revocation.path() + "' (key '" + key + "') revoked by " + caller + " (" + mode
				+ "): " + revocation.action() + ", holders " + holders + ", released " + revocation.released());
		if (this.events != null) {
			Map<String, Object> data = new LinkedHashMap<>();
			data.put("key", key);
			data.put("path", revocation.path());
			data.put("mode", mode.name());
			data.put("action", revocation.action().name());
			data.put("holders", holders);
			data.put("released", revocation.released());
			this.events.publishEvent(new AuditApplicationEvent(caller, LOCK_REVOKED, data));
		}
	}

	private static Map<String, Object> describe(LockParticipant holder) {
		Map<String, Object> described = new LinkedHashMap<>();
		described.put("path", holder.path());
		described.put("kind", holder.kind());
		described.put("owner", holder.owner());
		described.put("sessionId", holder.sessionId());
		described.put("fencingToken", holder.fencingToken());
		return described;
	}

	/**
	 * The locks of this application.
	 *
	 * @param pid this application's process id (as written into its lock znodes)
	 * @param host this application's host name (as written into its lock znodes)
	 * @param rootPath the znode below which lock paths live
	 * @param held the grants held, oldest first
	 * @param kept the znodes kept while nobody holds them (kept locks), least recently used first
	 * @param waiting the threads waiting, longest waiting first
	 * @param leadership the leadership groups this application takes part in, by name
	 */
	public record ApplicationLocks(long pid, String host, String rootPath, List<HeldLock> held, List<KeptLock> kept,
			List<WaitingLock> waiting, List<GroupLeader> leadership) {
	}

	/**
	 * The leader of one leadership group.
	 *
	 * @param group the group
	 * @param leader the participant id of its leader, {@code null} while nobody leads
	 * @param self whether this application leads it
	 */
	public record GroupLeader(String group, @Nullable String leader, boolean self) {
	}

	/**
	 * The participants of one lock.
	 *
	 * @param path the znode path of the lock
	 * @param waiters how many wait for it: its znodes that do not hold (of any application), plus
	 * this application's threads waiting in its local queues (see
	 * {@link LockQueue#waiters()})
	 * @param localWaiters how many threads of this application wait for it (in ZooKeeper's queue
	 * or in the application's local queue)
	 * @param participants its lock znodes in queue order
	 */
	public record PathParticipants(String path, int waiters, int localWaiters,
			List<LockParticipant> participants) {
	}

}
