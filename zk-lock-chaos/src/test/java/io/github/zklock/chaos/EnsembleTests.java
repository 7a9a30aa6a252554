package io.github.zklock.chaos;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A real ensemble from Debian's package: it forms, fails over when its leader dies or is cut off,
 * takes a restarted or healed server back, and cuts an application off; the links between servers
 * pass through the proxies only. Clients are Curator clients that connect through an
 * application's proxies. Skipped where the package is not installed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EnsembleTests {

	private static final Log logger = LogFactory.getLog(EnsembleTests.class);

	private static final byte[] VALUE = "value".getBytes(StandardCharsets.UTF_8);

	@BeforeAll
	static void requirePackage() {
		assumeTrue(Ensemble.packageAvailable(),
				"Debian's zookeeper package is not installed (no /usr/share/java/zookeeper.jar)");
	}

	@Test
	void fiveServersElectOneLeader(@TempDir Path workDir) throws Exception {
		try (Ensemble ensemble = Ensemble.start(5, 1, workDir, Ensemble.Options.defaults())) {
			int leader = ensemble.leader();
			assertThat(leader).isBetween(1, 5);
			assertThat(ensemble.followers()).hasSize(4).doesNotContain(leader);
			// A follower serves once it has its leader's data; the leader counts it synced when it acknowledges that.
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(ensemble.mntr(leader))
				.containsEntry("zk_server_state", "leader")
				.containsEntry("zk_synced_followers", "4"));
		}
	}

	static CuratorFramework connect(String connectString, Duration sessionTimeout) throws InterruptedException {
		CuratorFramework client = CuratorFrameworkFactory.builder()
			.connectString(connectString)
			.sessionTimeoutMs((int) sessionTimeout.toMillis())
			.connectionTimeoutMs(2000)
			.retryPolicy(new RetryOneTime(200))
			.build();
		client.start();
		assertThat(client.blockUntilConnected(20, TimeUnit.SECONDS)).isTrue();
		return client;
	}

	/** Write until a write succeeds: the first ones may meet a server that has just lost its leader. */
	static void awaitWrite(CuratorFramework client, String path) {
		await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
			.until(() -> client.create().orSetData().creatingParentsIfNeeded().forPath(path, VALUE) != null);
	}

	/** Three servers, two applications, shared by the tests, whole again after each. */
	@Nested
	@TestInstance(TestInstance.Lifecycle.PER_CLASS)
	class ThreeServers {

		Ensemble ensemble;

		@BeforeAll
		void start(@TempDir Path workDir) throws Exception {
			this.ensemble = Ensemble.start(3, 2, workDir, Ensemble.Options.defaults());
		}

		@AfterAll
		void close() {
			if (this.ensemble != null) {
				this.ensemble.close();
			}
		}

		@AfterEach
		void restore() throws Exception {
			this.ensemble.healAll();
			for (int server = 1; server <= 3; server++) {
				if (!this.ensemble.running(server)) {
					this.ensemble.start(server);
				}
			}
			assertThat(this.ensemble.awaitQuorum(Duration.ofSeconds(30))).isTrue();
			assertThat(this.ensemble.followers()).hasSize(2);
		}

		@Test
		void formsWithOneLeaderAndServesOneApplicationsWritesToAnother() throws Exception {
			int leader = this.ensemble.leader();
			assertThat(leader).isBetween(1, 3);
			assertThat(this.ensemble.followers()).hasSize(2).doesNotContain(leader);
			assertThat(this.ensemble.serving(leader)).isTrue();
			assertThat(this.ensemble.mntr(leader)).containsEntry("zk_server_state", "leader");
			try (CuratorFramework writer = connect(this.ensemble.connectString(0), Duration.ofSeconds(10));
					CuratorFramework reader = connect(this.ensemble.connectString(1), Duration.ofSeconds(10))) {
				writer.create().forPath("/written-by-0", VALUE);
				// A read is served by the reader's server, which may not have applied the write yet.
				await().atMost(Duration.ofSeconds(10)).ignoreExceptions()
					.untilAsserted(() -> assertThat(reader.getData().forPath("/written-by-0")).isEqualTo(VALUE));
			}
		}

		@Test
		void electsANewLeaderWhenTheLeaderIsKilledAndTakesItBackAsFollower() throws Exception {
			int killed = this.ensemble.leader();
			long pid = this.ensemble.pid(killed);
			long start = System.nanoTime();
			this.ensemble.kill(killed);
			assertThat(this.ensemble.running(killed)).isFalse();
			await().atMost(Duration.ofSeconds(30)).until(() -> {
				int leader = this.ensemble.leader();
				return leader > 0 && leader != killed;
			});
			logger.info("New leader " + this.ensemble.leader() + " "
					+ Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms after the leader was killed");
			int leader = this.ensemble.leader();
			try (CuratorFramework client = connect(this.ensemble.connectString(0), Duration.ofSeconds(10))) {
				awaitWrite(client, "/after-kill");
			}
			this.ensemble.start(killed);
			assertThat(this.ensemble.pid(killed)).isNotEqualTo(pid);
			await().atMost(Duration.ofSeconds(30)).until(() -> this.ensemble.followers().contains(killed));
			assertThat(this.ensemble.leader()).isEqualTo(leader);
		}

		@Test
		void majorityElectsANewLeaderWhenThePartitionCutsTheLeaderOff() throws Exception {
			int isolated = this.ensemble.leader();
			List<Integer> majority = IntStream.rangeClosed(1, 3).filter((id) -> id != isolated).boxed().toList();
			long start = System.nanoTime();
			this.ensemble.partition(List.of(List.of(isolated), majority));
			await().atMost(Duration.ofSeconds(30)).until(() -> majority.contains(this.ensemble.leader()));
			logger.info("New leader " + this.ensemble.leader() + " "
					+ Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms after the leader was cut off");
			try (CuratorFramework client = connect(this.ensemble.connectString(0, majority), Duration.ofSeconds(10))) {
				awaitWrite(client, "/after-partition");
			}
			await().atMost(Duration.ofSeconds(15)).until(() -> !this.ensemble.serving(isolated));
			assertThat(this.ensemble.awaitQuorum(Duration.ZERO)).isTrue();

			this.ensemble.healPartitions();
			await().atMost(Duration.ofSeconds(30)).until(() -> this.ensemble.followers().size() == 2);
			assertThat(this.ensemble.leader()).isIn(majority);
		}

		@Test
		void isolatedApplicationLosesItsSessionWhileTheOtherWritesAndReconnectsWhenHealed() throws Exception {
			Queue<ConnectionState> states = new ConcurrentLinkedQueue<>();
			try (CuratorFramework isolated = connect(this.ensemble.connectString(0), Duration.ofSeconds(4));
					CuratorFramework other = connect(this.ensemble.connectString(1), Duration.ofSeconds(10))) {
				isolated.getConnectionStateListenable().addListener((client, state) -> states.add(state));
				isolated.create().withMode(CreateMode.EPHEMERAL).forPath("/ephemeral-of-0");
				long session = isolated.getZookeeperClient().getZooKeeper().getSessionId();

				this.ensemble.isolateApplication(0);
				await().atMost(Duration.ofSeconds(10)).until(() -> states.contains(ConnectionState.SUSPENDED));
				other.create().forPath("/written-by-1-meanwhile", VALUE);
				// The servers no longer hear the isolated application: its session expires.
				await().atMost(Duration.ofSeconds(20))
					.until(() -> other.checkExists().forPath("/ephemeral-of-0") == null);

				this.ensemble.healApplication(0);
				await().atMost(Duration.ofSeconds(20)).until(() -> states.contains(ConnectionState.RECONNECTED));
				awaitWrite(isolated, "/written-by-0-after");
				assertThat(isolated.getZookeeperClient().getZooKeeper().getSessionId()).isNotEqualTo(session);
			}
		}

		@Test
		void everyLinkBetweenServersPassesThroughAProxy() throws Exception {
			assumeTrue(LoopbackConnections.available(), "no /proc/net/tcp to read connections from");
			Set<Integer> serverPorts = IntStream.rangeClosed(1, 3)
				.mapToObj(this.ensemble::server)
				.flatMap((server) -> Stream.of(server.quorumPort(), server.electionPort()))
				.collect(Collectors.toSet());
			List<LoopbackConnections.Connection> toServers = LoopbackConnections.established().stream()
				.filter((connection) -> serverPorts.contains(connection.remotePort()))
				.toList();
			// Three election connections and two followers' connections to their leader, at least.
			assertThat(toServers).hasSizeGreaterThanOrEqualTo(5);
			Set<Long> ours = LoopbackConnections.socketsOfThisProcess();
			assertThat(toServers).allSatisfy((connection) -> assertThat(ours)
				.as("connection from port %d to server port %d, opened by this JVM (a proxy)",
						connection.localPort(), connection.remotePort())
				.contains(connection.inode()));
		}

	}

}
