package io.github.zklock.actuate;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.KeeperException;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import io.github.zklock.Leadership;
import io.github.zklock.curator.CuratorLockAdmin;

/**
 * Health of the ZooKeeper connection that zk-lock's locks depend on: UP when the client is
 * connected and the server answers a read within the probe timeout; DOWN when the connection is
 * suspended, the session was lost, or the server does not answer. Details: the connection state,
 * the connect string (as configured, it holds no credentials), the session id, the lock root path
 * and how many locks this application holds; with a {@link Leadership}, the leader of each group
 * the application takes part in.
 *
 * <p>The probe is one asynchronous {@code exists} of the root znode, waited for at most the probe
 * timeout, so a hung server cannot hang the health endpoint.
 */
public class ZkLockHealthIndicator extends AbstractHealthIndicator {

	private final CuratorFramework client;

	private final CuratorLockAdmin admin;

	private final Duration probeTimeout;

	private final @Nullable Leadership leadership;

	/**
	 * Create an indicator. It registers nothing with the client: the connection state it reports
	 * is the one the registry follows for its grants.
	 * @param client the client the locks use
	 * @param admin the operator side of the lock registry, for the connection state, the root path
	 * and the held lock count
	 * @param probeTimeout how long to wait for the server's answer
	 */
	public ZkLockHealthIndicator(CuratorFramework client, CuratorLockAdmin admin, Duration probeTimeout) {
		this(client, admin, probeTimeout, null);
	}

	/**
	 * Create an indicator that also shows, while connected, the leader of each group the
	 * application takes part in (detail {@code leadership}: group to {@code leader}, the
	 * participant id or {@code null}, and {@code self}, whether this instance leads; one
	 * getChildren and one getData per group).
	 * @param client the client the locks use
	 * @param admin the operator side of the lock registry
	 * @param probeTimeout how long to wait for the server's answer
	 * @param leadership the application's leadership, or {@code null} for none
	 */
	public ZkLockHealthIndicator(CuratorFramework client, CuratorLockAdmin admin, Duration probeTimeout,
			@Nullable Leadership leadership) {
		super("ZooKeeper health check failed");
		this.client = client;
		this.admin = admin;
		this.probeTimeout = probeTimeout;
		this.leadership = leadership;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) throws Exception {
		boolean connected = this.client.getZookeeperClient().isConnected();
		ConnectionState state = connected ? connectedState() : notConnectedState();
		builder.withDetail("state", state.name())
			.withDetail("connectString", this.client.getZookeeperClient().getCurrentConnectionString())
			.withDetail("rootPath", this.admin.registry().getRootPath())
			.withDetail("heldLocks", this.admin.heldLockCount());
		if (!connected) {
			builder.down();
			return;
		}
		builder.withDetail("sessionId",
				"0x" + Long.toHexString(this.client.getZookeeperClient().getZooKeeper().getSessionId()));
		KeeperException.Code answer = probe();
		if (answer == KeeperException.Code.OK) {
			builder.up();
			if (this.leadership != null && !this.leadership.getGroups().isEmpty()) {
				builder.withDetail("leadership", leaders(this.leadership));
			}
		}
		else {
			builder.down().withDetail("probe", (answer != null) ? answer.name() : "no answer within " + this.probeTimeout.toMillis() + " ms");
		}
	}

	private ConnectionState connectedState() {
		ConnectionState state = this.admin.lastConnectionState();
		return (state != null && state.isConnected()) ? state : ConnectionState.CONNECTED;
	}

	private ConnectionState notConnectedState() {
		ConnectionState state = this.admin.lastConnectionState();
		return (state == ConnectionState.LOST) ? state : ConnectionState.SUSPENDED;
	}

	private KeeperException.Code probe() throws Exception {
		CountDownLatch answered = new CountDownLatch(1);
		AtomicInteger code = new AtomicInteger();
		this.client.getZookeeperClient().getZooKeeper().exists("/", false, (rc, path, ctx, stat) -> {
			code.set(rc);
			answered.countDown();
		}, null);
		if (!answered.await(this.probeTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
			return null;
		}
		return KeeperException.Code.get(code.get());
	}

	private static Map<String, Map<String, @Nullable Object>> leaders(Leadership leadership) {
		Map<String, Map<String, @Nullable Object>> leaders = new TreeMap<>();
		for (String group : leadership.getGroups()) {
			Map<String, @Nullable Object> leader = new LinkedHashMap<>();
			leader.put("leader", leadership.getLeader(group).orElse(null));
			leader.put("self", leadership.isLeader(group));
			leaders.put(group, leader);
		}
		return leaders;
	}

}
