package io.github.zklock.docs.locks;

import java.time.Duration;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.curator.CuratorLockRegistry;

/**
 * The guide's example without Spring: the whole library on a Curator client.
 */
public final class PlainJava {

	private static final Log log = LogFactory.getLog(PlainJava.class);

	private PlainJava() {
	}

	/**
	 * Lock once on an ensemble and close everything.
	 * @param connectString the ensemble
	 * @return the fencing token of the grant
	 */
	public static long lockOnce(String connectString) {
		// tag::plain[]
		CuratorFramework curator = CuratorFrameworkFactory.newClient(connectString,
				new ExponentialBackoffRetry(1000, 3));
		curator.start();
		CuratorLockRegistry registry = new CuratorLockRegistry(curator, "/locks", 10_000);
		registry.addLockStateListener((event) -> log.warn(event));
		LockTemplate locks = new LockTemplate(registry, Duration.ofSeconds(5)); // the default wait time

		Long token = locks.execute("/stock/apple", LockMode.WRITE, null, (handle) -> handle.fencingToken());

		registry.close(); // before the client
		curator.close();
		// end::plain[]
		return token;
	}

}
