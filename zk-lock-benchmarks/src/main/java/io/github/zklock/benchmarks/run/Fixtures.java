package io.github.zklock.benchmarks.run;

import java.util.ArrayDeque;
import java.util.Deque;

import io.github.zklock.benchmarks.AnnotatedState;
import io.github.zklock.benchmarks.ColdKeys;
import io.github.zklock.benchmarks.Lock4jState;
import io.github.zklock.benchmarks.PlainZooKeeperState;
import io.github.zklock.benchmarks.RawCuratorState;
import io.github.zklock.benchmarks.SpringIntegrationState;
import io.github.zklock.benchmarks.ZkLockState;
import io.github.zklock.benchmarks.ZooKeeperState;

/**
 * Every JMH state of the benchmarks, set up once on one server, for the interleaved runs: the same
 * objects and the same benchmark methods as under JMH, only called by {@link InterleavedFork}.
 */
final class Fixtures implements AutoCloseable {

	final ZooKeeperState zooKeeper = new ZooKeeperState();

	final PlainZooKeeperState plain = new PlainZooKeeperState();

	final RawCuratorState raw = new RawCuratorState();

	final ZkLockState ours = new ZkLockState();

	final AnnotatedState annotated = new AnnotatedState();

	final AnnotatedState.FastPath annotatedFastPath = new AnnotatedState.FastPath();

	final SpringIntegrationState springIntegration = new SpringIntegrationState();

	final Lock4jState lock4j = new Lock4jState();

	final ColdKeys coldKeys = new ColdKeys();

	private final Deque<AutoCloseable> teardown = new ArrayDeque<>();

	Fixtures() throws Exception {
		try {
			this.zooKeeper.start();
			this.teardown.push(this.zooKeeper::stop);
			this.plain.setUp(this.zooKeeper);
			this.teardown.push(this.plain::close);
			this.raw.setUp(this.zooKeeper);
			this.ours.setUp(this.zooKeeper);
			this.teardown.push(this.ours::close);
			this.annotated.setUp(this.zooKeeper);
			this.teardown.push(this.annotated::close);
			this.annotatedFastPath.setUp(this.zooKeeper);
			this.teardown.push(this.annotatedFastPath::close);
			this.springIntegration.setUp(this.zooKeeper);
			this.teardown.push(this.springIntegration::close);
			this.lock4j.setUp(this.zooKeeper);
			this.coldKeys.setUp(this.zooKeeper);
		}
		catch (Exception | Error ex) {
			close();
			throw ex;
		}
	}

	@Override
	public void close() throws Exception {
		while (!this.teardown.isEmpty()) {
			this.teardown.pop().close();
		}
	}

}
