package io.github.zklock.benchmarks;

import java.util.List;

import com.baomidou.lock.LockTemplate;
import com.baomidou.lock.executor.ZookeeperLockExecutor;
import com.baomidou.lock.spring.boot.autoconfigure.Lock4jProperties;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Peer: lock4j's {@code LockTemplate} with its {@code ZookeeperLockExecutor} (a new
 * {@code InterProcessMutex} per call, below its fixed root {@code /curator/lock4j}) on the shared
 * Curator client, with lock4j's default properties (acquire timeout 3 s, retry interval 100 ms). Built
 * by hand as its auto-configuration would, without booting Spring: lock4j targets Spring Boot 2/3,
 * and what is measured is its lock path.
 */
@State(Scope.Benchmark)
public class Lock4jState {

	LockTemplate template;

	String key;

	/**
	 * Build the template and the executor.
	 * @param zooKeeper the server and client
	 * @throws Exception if the template rejects its settings
	 */
	@Setup(Level.Trial)
	public void setUp(ZooKeeperState zooKeeper) throws Exception {
		this.template = new LockTemplate();
		this.template.setProperties(new Lock4jProperties());
		this.template.setExecutors(List.of(new ZookeeperLockExecutor(zooKeeper.client())));
		this.template.afterPropertiesSet();
		this.key = zooKeeper.runId() + "-k";
	}

}
