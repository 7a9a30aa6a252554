package io.github.zklock.sample;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import io.github.zklock.sample.demo.ScheduledAudit;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Instances of the sample application in the test's JVM, as {@code ./demo.sh} runs them in JVMs of
 * their own: each has its own application context, ZooKeeper client (its own session), lock
 * registry and connection pool, and they share one ZooKeeper server (a {@link ZooKeeperExtension}
 * of their own) and one in-memory H2 database. Their locks exclude each other only through
 * ZooKeeper. Registered on a {@code static} field, the server and then the instances start before
 * the class's first test; after its last test and its {@code @AfterAll} methods the instances
 * stop, the database is shut down, and the server stops last, so that closing clients still reach
 * it.
 * <pre class="code">
 * &#64;RegisterExtension
 * static final SampleInstances instances = new SampleInstances("orders", List.of("instance-a", "instance-b"),
 * 		"--sample.purchase-think-time=50ms");
 * </pre>
 * <p>Each instance listens on a free port of 127.0.0.1, without JMX and without the embedded server;
 * the arguments given are added to each one's command line. Meant for the test thread, but
 * {@link #callConcurrently}'s calls.
 */
public final class SampleInstances implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback,
		AfterEachCallback {

	private final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private final String database;

	private final List<String> instanceIds;

	private final List<String> arguments;

	private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

	private String jdbcUrl;

	/** How many classes of the tree run now: JUnit calls back again for each {@code @Nested} class. */
	private int classDepth;

	/**
	 * Instances to start before the class's first test.
	 * @param database the start of the H2 database's name (a random suffix follows)
	 * @param instanceIds each instance's {@code sample.instance-id}, in the order of
	 * {@link #instance(int)}
	 * @param arguments further command-line arguments of every instance ({@code --name=value})
	 */
	public SampleInstances(String database, List<String> instanceIds, String... arguments) {
		this.database = database;
		this.instanceIds = List.copyOf(instanceIds);
		this.arguments = List.of(arguments);
	}

	@Override
	public void beforeAll(ExtensionContext context) throws Exception {
		this.zooKeeper.beforeAll(context);
		if (this.classDepth++ > 0) {
			return;
		}
		this.jdbcUrl = "jdbc:h2:mem:" + this.database + "-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
		for (String instanceId : this.instanceIds) {
			List<String> commandLine = new ArrayList<>(List.of("--server.address=127.0.0.1", "--server.port=0",
					"--spring.jmx.enabled=false", "--zk.lock.embedded.enabled=false",
					"--zk.lock.connect-string=" + this.zooKeeper.getConnectString(),
					"--spring.datasource.url=" + this.jdbcUrl, "--sample.instance-id=" + instanceId));
			commandLine.addAll(this.arguments);
			this.instances.add(new SpringApplicationBuilder(SampleApplication.class).run(commandLine.toArray(String[]::new)));
		}
	}

	@Override
	public void beforeEach(ExtensionContext context) throws Exception {
		this.zooKeeper.beforeEach(context);
	}

	@Override
	public void afterEach(ExtensionContext context) throws Exception {
		this.zooKeeper.afterEach(context);
	}

	@Override
	public void afterAll(ExtensionContext context) throws Exception {
		try {
			if (--this.classDepth == 0) {
				stopInstances();
			}
		}
		finally {
			this.zooKeeper.afterAll(context);
		}
	}

	private void stopInstances() throws SQLException {
		try {
			for (int i = this.instances.size() - 1; i >= 0; i--) {
				this.instances.get(i).close();
			}
		}
		finally {
			this.instances.clear();
			try (Connection connection = DriverManager.getConnection(this.jdbcUrl, "sa", "");
					Statement statement = connection.createStatement()) {
				statement.execute("SHUTDOWN");
			}
		}
	}

	/**
	 * An instance.
	 * @param index its index in the ids given, from 0
	 * @return its application context, running
	 */
	public ConfigurableApplicationContext instance(int index) {
		return this.instances.get(index);
	}

	/**
	 * The shared database's JDBC URL; its user is {@code sa} without a password.
	 * @return an H2 in-memory URL
	 */
	public String jdbcUrl() {
		return this.jdbcUrl;
	}

	/**
	 * The scheduled jobs' runs so far, as {@code ./demo.sh} audits them.
	 * @return per job, its runs
	 * @throws SQLException if the database cannot be read
	 */
	public List<ScheduledAudit.JobRuns> scheduledJobs() throws SQLException {
		try (Connection connection = DriverManager.getConnection(this.jdbcUrl, "sa", "")) {
			return ScheduledAudit.read(connection);
		}
	}

	/**
	 * Call every instance from {@code threadsPerInstance} threads at once, each making
	 * {@code callsPerThread} calls one after the other, and wait for them all.
	 * @param threadsPerInstance the threads per instance
	 * @param callsPerThread the calls of each thread
	 * @param timeout the longest wait for each thread's calls, counted from the end of the
	 * previous thread's wait
	 * @param call the call; its operation id is unique in this JVM
	 * @throws java.util.concurrent.ExecutionException with what a call threw, the first in the
	 * order the threads were started, once the others are interrupted
	 * @throws java.util.concurrent.TimeoutException if a thread's calls took longer
	 * @throws InterruptedException if interrupted while waiting
	 */
	public void callConcurrently(int threadsPerInstance, int callsPerThread, Duration timeout, Call call)
			throws Exception {
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService executor = Executors.newFixedThreadPool(this.instances.size() * threadsPerInstance);
		List<Future<?>> callers = new ArrayList<>();
		try {
			for (int i = 0; i < this.instances.size(); i++) {
				ConfigurableApplicationContext instance = this.instances.get(i);
				String instanceId = this.instanceIds.get(i);
				for (int t = 0; t < threadsPerInstance; t++) {
					String caller = instanceId + "-" + t;
					callers.add(executor.submit(() -> {
						assertThat(start.await(30, TimeUnit.SECONDS)).isTrue();
						for (int c = 0; c < callsPerThread; c++) {
							call.call(instance, caller + "-" + c + "-" + UUID.randomUUID());
						}
						return null;
					}));
				}
			}
			start.countDown();
			for (Future<?> caller : callers) {
				caller.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
			}
		}
		finally {
			executor.shutdownNow();
			assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
		}
	}

	/** One call of {@link #callConcurrently}. */
	@FunctionalInterface
	public interface Call {

		/**
		 * Make the call.
		 * @param instance the instance to call
		 * @param operation an id of its own
		 * @throws Exception anything: {@link #callConcurrently} rethrows it
		 */
		void call(ConfigurableApplicationContext instance, String operation) throws Exception;

	}

}
