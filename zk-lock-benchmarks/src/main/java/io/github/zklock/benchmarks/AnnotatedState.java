package io.github.zklock.benchmarks;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The starter's declarative path: {@link LockedService} behind the {@code @DistributedLock} proxy, in
 * a Spring Boot application with the starter's auto-configuration. The application is given the
 * shared Curator client as its {@code CuratorFramework} bean (built with the settings the
 * auto-configuration uses by default), so that the annotated calls and the raw recipes differ in
 * nothing but the code path, not in their connection.
 */
@State(Scope.Benchmark)
public class AnnotatedState {

	/**
	 * The same with the prototype {@link FastPathLockOperationSource}: the annotated path with the
	 * proposed fix of its per-call SpEL evaluation.
	 */
	@State(Scope.Benchmark)
	public static class FastPath extends AnnotatedState {

		@Override
		boolean fastPath() {
			return true;
		}

		@Override
		String root() {
			return ZkLockState.ROOT + "-fast-path";
		}

	}


	/** The key every uncontended call locks (the path is {@code /<kind>/k}). */
	static final String KEY = "k";

	ConfigurableApplicationContext context;

	LockedService service;

	/**
	 * Start the application on the fork's server.
	 * @param zooKeeper the server
	 */
	@Setup(Level.Trial)
	public void setUp(ZooKeeperState zooKeeper) {
		this.context = LockedServiceApplication.start(zooKeeper.connectString(), zooKeeper.path(root()),
				zooKeeper.client(), fastPath());
		this.service = this.context.getBean(LockedService.class);
	}

	boolean fastPath() {
		return false;
	}

	String root() {
		return ZkLockState.ROOT;
	}

	/** Close the application (the shared client stays open). */
	@TearDown(Level.Trial)
	public void close() {
		this.context.close();
	}

}
